import type {
  CreateScheduleRecord,
  ResumeScheduleRecord,
  ScheduleJobTemplateRecord,
  ScheduleRulesRecord,
  UpdateScheduleRecord,
} from '@kairos/schemas';
import {
  jsonPayload,
  millis,
  retryRecord,
  type Instant,
  type RequestEnvelope,
  type RetryOptions,
} from './requests.js';

/** What each run of a schedule is: the job fields of `POST /v1/jobs`, camel-cased. */
export interface ScheduleJobTemplate {
  /** Letters, digits and `._:-`. */
  readonly type: string;
  readonly resourceClass: string;
  /** Any JSON-serializable value, at most 64 KiB as JSON. Default: {}. */
  readonly payload?: unknown;
  /** Attempts in all per run, the first included (default 3, at most 100). */
  readonly maxAttempts?: number;
  /** Backoff between a run's attempts (each default as in the HTTP API). */
  readonly retry?: RetryOptions;
  /** Each run's deadline, ms after its fire time. */
  readonly deadlineMs?: number;
}

/** What runs of the occurrences that missed their time (default fire_latest). */
export type MisfirePolicy =
  | { readonly kind: 'skip' }
  | { readonly kind: 'fire_latest' }
  | { readonly kind: 'fire_all'; readonly maxCount: number }
  | { readonly kind: 'within'; readonly windowMs: number; readonly maxCount?: number };

/** A schedule's rules: the fields of `POST /v1/schedules`, camel-cased (tenant and key: the envelope's). */
export interface ScheduleRules {
  /** 5 fields (minute first) or 6 (second first), or an alias such as `@daily`. */
  readonly cron: string;
  /** An IANA zone name (`Europe/London`, `UTC`); fixed offsets are refused. */
  readonly timeZone: string;
  /** No occurrence before this (inclusive). */
  readonly startAt?: Instant;
  /** No occurrence at or after this (exclusive). */
  readonly endAt?: Instant;
  readonly job: ScheduleJobTemplate;
  /** Wall times that do not exist (gap, default shift) or exist twice (overlap, default first). */
  readonly dst?: { readonly gap?: 'shift' | 'skip'; readonly overlap?: 'first' | 'last' | 'both' };
  readonly misfire?: MisfirePolicy;
  /** When the previous run is still going (default allow). */
  readonly overlap?: 'allow' | 'skip' | 'buffer_one' | 'cancel_previous';
  /** Every run moves by one fixed offset within ±jitterMs (0 to 3,600,000; default 0). */
  readonly jitterMs?: number;
  /**
   * A run not SUCCEEDED this long after its fire time is late, and the schedule alerts
   * (`schedule_sla_missed`) until a later run succeeds (1,000 to 604,800,000 ms; default: no SLA).
   */
  readonly slaMs?: number;
}

/**
 * Create a recurring schedule. The idempotency key is the schedule's (shared with the HTTP API):
 * the same key never creates a second schedule.
 */
export interface CreateSchedule extends RequestEnvelope, ScheduleRules {}

/** Replace a schedule's rules as a new version (`PUT /v1/schedules/{id}`): give all of them. */
export interface UpdateSchedule extends RequestEnvelope, ScheduleRules {
  readonly scheduleId: string;
  /** Apply only if the schedule is at this version (If-Match); refused SCHEDULE_STATE_CONFLICT otherwise. */
  readonly expectedVersion?: number;
}

/** Pause, delete or trigger (one extra run now) a schedule of the tenant. */
export interface ScheduleTarget extends RequestEnvelope {
  readonly scheduleId: string;
}

/** Resume a paused schedule; `catchUp` treats what came due while paused as misfires. */
export interface ResumeSchedule extends ScheduleTarget {
  readonly catchUp?: boolean;
}

function jobTemplateRecord(job: ScheduleJobTemplate): ScheduleJobTemplateRecord {
  return {
    type: job.type,
    resource_class: job.resourceClass,
    payload: jsonPayload('job.payload', job.payload),
    max_attempts: job.maxAttempts ?? null,
    retry: retryRecord(job.retry),
    deadline_ms: job.deadlineMs ?? null,
  };
}

function rulesRecord(r: ScheduleRules): ScheduleRulesRecord {
  const m = r.misfire;
  return {
    cron: r.cron,
    time_zone: r.timeZone,
    start_at: r.startAt === undefined ? null : millis('startAt', r.startAt),
    end_at: r.endAt === undefined ? null : millis('endAt', r.endAt),
    job: jobTemplateRecord(r.job),
    dst: r.dst ? { gap: r.dst.gap ?? null, overlap: r.dst.overlap ?? null } : null,
    misfire: m
      ? {
          kind: m.kind,
          max_count: 'maxCount' in m ? (m.maxCount ?? null) : null,
          window_ms: 'windowMs' in m ? m.windowMs : null,
        }
      : null,
    overlap: r.overlap ?? null,
    jitter_ms: r.jitterMs ?? null,
    sla_ms: r.slaMs ?? null,
  };
}

export function createScheduleRecord(s: CreateSchedule): CreateScheduleRecord {
  return rulesRecord(s);
}

export function updateScheduleRecord(s: UpdateSchedule): UpdateScheduleRecord {
  return { schedule_id: s.scheduleId, expected_version: s.expectedVersion ?? null, ...rulesRecord(s) };
}

export function resumeScheduleRecord(s: ResumeSchedule): ResumeScheduleRecord {
  return { schedule_id: s.scheduleId, catch_up: s.catchUp ?? false };
}
