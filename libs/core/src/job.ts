import type { RetryBackoff } from './retry.js';

/** Job lifecycle states (DESIGN.md section 3). Terminal ones never change again. */
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

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set([
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'SKIPPED',
]);

/** What a command handler needs to create one job, after validation. */
export interface JobSpec {
  readonly tenantId: string;
  readonly type: string;
  readonly resourceClass: string;
  /** UTF-8 JSON of the payload, size-checked. */
  readonly payload: string;
  readonly dueAt: Date;
  readonly deadlineAt: Date | null;
  readonly idempotencyKey: string | null;
  readonly maxAttempts: number;
  /** Backoff between attempts: min(cap, base · 2^(attempt−1) + random(0, jitter)). */
  readonly retry: RetryBackoff;
}

/** A job as stored and as events describe it. */
export interface Job extends JobSpec {
  readonly id: string;
  readonly state: JobState;
  readonly version: number;
  readonly fence: number;
  readonly attempt: number;
  readonly routingKey: string;
  readonly shard: number;
  readonly createdAt: Date;
  readonly dispatchedAt: Date | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly lastError: string | null;
  /** The failure class of the latest failed attempt (transient, throttled, permanent, ambiguous). */
  readonly lastFailureClass: string | null;
  /** The job this one replays or re-runs (a new job of the same kind), or null. */
  readonly replayOf: string | null;
  /** For a run of a recurring schedule: which schedule and occurrence (absent or null otherwise). */
  readonly occurrence?: JobOccurrence | null;
  /**
   * W3C `traceparent` the job was created in (or Kairos started for it), kept for every attempt;
   * null for jobs created before Kairos kept one.
   */
  readonly traceparent?: string | null;
}

/** The schedule occurrence a job runs. */
export interface JobOccurrence {
  readonly scheduleId: string;
  /** Deterministic: the same occurrence always has the same id. */
  readonly occurrenceId: string;
  /** The occurrence's instant (before jitter; for a backfill run, the past instant it stands for). */
  readonly occurrenceAt: Date;
  /** regular, catch_up, trigger or backfill (RUN_KINDS). */
  readonly kind: string;
}
