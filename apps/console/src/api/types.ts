// The API's answers as the console reads them (the OpenAPI document at /openapi.json is the
// source; these name only what the pages use). Times are ISO-8601 strings.

export const JOB_STATES = [
  'SCHEDULED',
  'QUEUED',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'SKIPPED',
] as const;
export type JobState = (typeof JOB_STATES)[number];

/** States a job never leaves: nothing more will happen to it (it can only be run again). */
export const TERMINAL_STATES = new Set<JobState>(['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'SKIPPED']);

export interface Whoami {
  readonly key_id: string;
  readonly name: string;
  /** One tenant, or `*` for a key of every tenant. */
  readonly tenant: string;
  readonly scopes: readonly string[];
}

export interface Job {
  readonly id: string;
  readonly tenant: string;
  readonly type: string;
  readonly resource_class: string;
  readonly payload: unknown;
  readonly state: JobState;
  readonly due_at: string;
  readonly deadline_at: string | null;
  readonly idempotency_key: string | null;
  readonly max_attempts: number;
  readonly retry: { readonly base_ms: number; readonly cap_ms: number; readonly jitter_ms: number };
  readonly attempt: number;
  readonly fence: number;
  readonly version: number;
  readonly created_at: string;
  readonly dispatched_at: string | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly last_error: string | null;
  readonly last_failure_class: string | null;
  readonly replay_of: string | null;
  readonly schedule_id: string | null;
  readonly occurrence: { readonly id: string; readonly at: string; readonly kind: string } | null;
  readonly traceparent: string | null;
}

export interface JobPage {
  readonly jobs: readonly Job[];
  readonly next_cursor: string | null;
}

export interface Attempt {
  readonly attempt: number;
  readonly fence: number;
  readonly epoch: number;
  readonly worker_id: string | null;
  readonly outcome: string | null;
  readonly failure_class: string | null;
  readonly error_class: string | null;
  readonly error_message: string | null;
  readonly retry_after_ms: number | null;
  readonly dispatched_at: string | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly suppressed: boolean;
}

export interface AttemptList {
  readonly job_id: string;
  /** First first. */
  readonly attempts: readonly Attempt[];
}

export interface FireTime {
  readonly instant: string;
  readonly local: string;
  readonly fire_at: string;
  readonly nominal: string;
  /** DST: `gap-shifted` (moved out of a skipped hour), `overlap-first`/`overlap-last` (a repeated hour). */
  readonly kind: 'regular' | 'gap-shifted' | 'overlap-first' | 'overlap-last';
}

export interface Schedule {
  readonly id: string;
  readonly tenant: string;
  readonly cron: string;
  readonly time_zone: string;
  readonly job: { readonly type: string; readonly resource_class?: string; readonly payload?: unknown };
  /** Absent: `allow`. */
  readonly overlap?: string;
  /** Absent: 0. */
  readonly jitter_ms?: number;
  /** Absent or null: no SLA. */
  readonly sla_ms?: number | null;
  readonly state: 'ACTIVE' | 'PAUSED' | 'DELETED';
  readonly version: number;
  readonly next_fire: FireTime | null;
  readonly health: 'ok' | 'late' | 'unknown';
  readonly last_success_at: string | null;
  readonly late_runs: number;
  readonly misfires: number;
  readonly skips: number;
  readonly created_at: string;
  readonly paused_at: string | null;
  readonly start_at: string | null;
  readonly end_at: string | null;
  readonly updated_at: string;
  readonly deleted_at: string | null;
  /** DST policy (absent: the defaults, gap `shift` and overlap `first`). */
  readonly dst?: { readonly gap?: 'shift' | 'skip'; readonly overlap?: 'first' | 'last' | 'both' };
  /** Misfire policy (absent: `fire_latest`). */
  readonly misfire?: { readonly kind: string; readonly max_count?: number; readonly window_ms?: number };
  readonly misfire_tolerance_ms: number;
  readonly misfires_skipped: number;
}

/** `GET /v1/schedules`: one page in creation order; `next_after` is the next page's `after`. */
export interface SchedulePage {
  readonly schedules: readonly Schedule[];
  readonly next_after: string | null;
}

/** `GET /v1/schedules/:id/preview`. */
export interface SchedulePreview {
  readonly schedule_id: string;
  readonly time_zone: string;
  readonly state: string;
  readonly fire_times: readonly FireTime[];
}

/** `POST /v1/schedules/:id/backfill`: how many occurrences the range had and how many ran anew. */
export interface BackfillAnswer {
  readonly schedule_id: string;
  readonly requested: number;
  readonly created: number;
  readonly already_backfilled: number;
  readonly rate_per_sec: number;
  readonly first_due_at: string | null;
  readonly last_due_at: string | null;
}

export interface Replay {
  readonly id: string;
  readonly tenant: string;
  readonly filter: Record<string, unknown>;
  readonly rate_per_sec: number;
  readonly state: 'RUNNING' | 'DONE' | 'CANCELLED';
  readonly selected: number;
  readonly replayed: number;
  readonly created_by: string;
  readonly created_at: string;
  readonly finished_at: string | null;
}

/** One action on a replay, as `replay_audit` keeps it (append-only). */
export interface ReplayAuditEntry {
  /** `created`, `resumed`, `cancelled` or `done`. */
  readonly action: string;
  /** The API key (`k_…`) or the runner that did it. */
  readonly actor: string;
  readonly at: string;
  readonly detail: Record<string, unknown>;
}

/** `GET /v1/replays/{id}`: the replay with its audit trail. */
export interface ReplayWithAudit extends Replay {
  readonly audit: readonly ReplayAuditEntry[];
}

/** `POST /v1/dead-letters:replay` with `dry_run: true`: what would be replayed. */
export interface ReplayPreview {
  readonly dry_run: true;
  readonly total: number;
  readonly groups: readonly {
    readonly type: string;
    readonly resource_class: string;
    readonly tenant: string;
    readonly count: number;
  }[];
  /** A few of the selected dead letters' ids. */
  readonly sample: readonly string[];
}

export interface DeadLetterPage {
  readonly dead_letters: readonly Job[];
  readonly next_cursor: string | null;
}

export interface ServiceStatus {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly latency_ms: number;
}

export interface GroupStatus {
  readonly group: string;
  readonly state: string;
  readonly members: readonly { readonly client_id: string; readonly host: string }[];
  readonly lag: number;
  readonly topics: readonly { readonly topic: string; readonly lag: number }[];
}

export interface SystemStatus {
  readonly services: readonly ServiceStatus[];
  readonly groups: readonly GroupStatus[];
}

/** `GET /v1/overview`: what the console's first page shows, in one answer. */
export interface Overview {
  /** When it was read (the API's clock). */
  readonly at: string;
  /** Live jobs (SCHEDULED, QUEUED, RUNNING, FAILED) by tenant, class and state. */
  readonly jobs: readonly {
    readonly tenant: string;
    readonly resource_class: string;
    readonly state: JobState;
    readonly count: number;
  }[];
  /** Due → dispatched, per class and minute. */
  readonly dispatch_lag: readonly {
    readonly resource_class: string;
    readonly points: readonly LagPoint[];
  }[];
  readonly canaries: readonly {
    readonly resource_class: string;
    readonly last_success_at: string | null;
    readonly latency_ms: number | null;
    readonly stalled: boolean;
  }[];
  readonly alerts: readonly Alert[];
  readonly postgres_only: readonly {
    readonly partition: number;
    readonly since: string;
    readonly owner: string;
  }[];
}

export interface LagPoint {
  readonly at: string;
  readonly count: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

export interface Alert {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly since: string;
  readonly summary: string;
}

/** One instance of a worker service, as it announces itself on `kairos.workers`. */
export interface WorkerInstance {
  readonly worker_id: string;
  readonly host: string;
  readonly pid: number;
  readonly started_at: string;
  readonly last_seen_at: string;
  /** Heard from within 3 heartbeat intervals. */
  readonly live: boolean;
  readonly resource_classes: readonly string[];
  readonly job_types: readonly string[];
}

/** `GET /v1/workers`: a worker service's consumer group, what its workers announce and Kafka's view. */
export interface WorkerGroup {
  readonly group: string;
  readonly services: readonly string[];
  readonly resource_classes: readonly string[];
  /** What its live workers handle; once none is, what the last one did. */
  readonly job_types: readonly string[];
  readonly state: string;
  readonly members: number;
  readonly lag: number;
  readonly last_seen_at: string | null;
  readonly workers: readonly WorkerInstance[];
}
