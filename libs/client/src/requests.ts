import type {
  CreateJobRecord,
  RescheduleJobRecord,
  RetryPolicyRecord,
  ScheduleCommandName,
  ScheduleCommandRecord,
  ScheduleRequestRecord,
} from '@kairos/schemas';

/** A point in time: a Date, an ISO-8601 string with an offset, or epoch milliseconds. */
export type Instant = Date | string | number;

/** What every request may carry besides its command. */
export interface RequestEnvelope {
  /** The tenant; default: the client's `tenant` option. */
  readonly tenant?: string;
  /**
   * The message key, and the dedupe key: per tenant, a key is applied once (a repeated create
   * answers with the job the key first created). Default: the request id, i.e. no dedupe across
   * calls. Give your own (e.g. `welcome-42`) to make retries of your own code safe.
   */
  readonly idempotencyKey?: string;
  /** Correlates the outcome; default: a new UUID v7. */
  readonly requestId?: string;
  /** Extra Kafka headers, e.g. `traceparent` (it reaches the job's events). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Create a one-time job: the fields of `POST /v1/jobs`, camel-cased. */
export interface ScheduleJob extends RequestEnvelope {
  /** Letters, digits and `._:-`. */
  readonly type: string;
  readonly resourceClass: string;
  /** Any JSON-serializable value, at most 64 KiB as JSON. Default: {}. */
  readonly payload?: unknown;
  /** When it becomes due; give this or delayMs (neither: now). */
  readonly dueAt?: Instant;
  /** Due this long after the ingest applies the request. */
  readonly delayMs?: number;
  /** A job still waiting at its deadline becomes EXPIRED. */
  readonly deadlineAt?: Instant;
  /** Attempts in all, the first included (default 3, at most 100). */
  readonly maxAttempts?: number;
  /** Backoff between attempts (each default as in the HTTP API). */
  readonly retry?: RetryOptions;
}

/** Backoff between attempts; a field left out takes the HTTP API's default. */
export interface RetryOptions {
  readonly baseMs?: number;
  readonly capMs?: number;
  readonly jitterMs?: number;
}

/** Cancel a job of this tenant that has not finished. */
export interface CancelJob extends RequestEnvelope {
  readonly jobId: string;
}

/** Move a SCHEDULED job of this tenant to a new due time: exactly one of dueAt and delayMs. */
export interface RescheduleJob extends RequestEnvelope {
  readonly jobId: string;
  readonly dueAt?: Instant;
  readonly delayMs?: number;
  /** A new deadline; null removes it; absent keeps the current one. */
  readonly deadlineAt?: Instant | null;
}

/** A request as produced: what to correlate its outcome by. */
export interface SentRequest {
  readonly requestId: string;
  readonly idempotencyKey: string;
  readonly tenant: string;
  readonly command: ScheduleCommandName;
}

/** Epoch ms of an instant; a string must parse, or a RangeError names the field. */
/** 9999-12-31T23:59:59.999Z. */
const MAX_INSTANT_MS = 253_402_300_799_999;

export function millis(field: string, value: Instant): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new RangeError(`${field} must be a Date, an ISO-8601 string or epoch ms, got ${String(value)}`);
  }
  // Years 1970-9999: what every Kairos process and PostgreSQL can hold as a date.
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_INSTANT_MS) {
    throw new RangeError(`${field} must be a time between 1970 and 9999 (whole ms), got ${String(value)}`);
  }
  return ms;
}

const opt = <T, R>(value: T | undefined, f: (v: T) => R): R | null => (value === undefined ? null : f(value));

/** A payload as JSON text ({} when absent); one that JSON cannot hold is a RangeError naming the field. */
export function jsonPayload(field: string, payload: unknown): string {
  const text = JSON.stringify(payload ?? {}) as string | undefined;
  if (text === undefined) throw new RangeError(`${field} must be JSON-serializable`);
  return text;
}

export function retryRecord(retry: RetryOptions | undefined): RetryPolicyRecord | null {
  return retry
    ? { base_ms: retry.baseMs ?? null, cap_ms: retry.capMs ?? null, jitter_ms: retry.jitterMs ?? null }
    : null;
}

export function createJobRecord(job: ScheduleJob): CreateJobRecord {
  return {
    type: job.type,
    resource_class: job.resourceClass,
    payload: jsonPayload('payload', job.payload),
    due_at: opt(job.dueAt, (v) => millis('dueAt', v)),
    delay_ms: job.delayMs ?? null,
    deadline_at: opt(job.deadlineAt, (v) => millis('deadlineAt', v)),
    max_attempts: job.maxAttempts ?? null,
    retry: retryRecord(job.retry),
  };
}

export function rescheduleJobRecord(r: RescheduleJob): RescheduleJobRecord {
  return {
    job_id: r.jobId,
    due_at: opt(r.dueAt, (v) => millis('dueAt', v)),
    delay_ms: r.delayMs ?? null,
    deadline_at:
      r.deadlineAt === undefined || r.deadlineAt === null ? null : millis('deadlineAt', r.deadlineAt),
    clear_deadline: r.deadlineAt === null,
  };
}

/** The record of each command of the union, by its short name. */
export type CommandRecords = {
  [R in ScheduleCommandRecord as keyof R extends `io.kairos.requests.${infer N}` ? N : never]: R[keyof R];
};

/** The union branch of a command, as Avro's JSON encoding names it. */
export function commandBranch<N extends ScheduleCommandName>(
  name: N,
  record: CommandRecords[N],
): ScheduleRequestRecord['command'] {
  // One key, the branch's name: TypeScript cannot see that the computed key makes it a member.
  return { [`io.kairos.requests.${name}`]: record } as unknown as ScheduleRequestRecord['command'];
}
