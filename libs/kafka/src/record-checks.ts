import type { JobEventRecord, TaskDispatchRecord, TaskResultRecord } from '@kairos/schemas';

/**
 * Bounds of the records Kairos' own processes exchange, checked by their consumers after decoding
 * and before anything reaches PostgreSQL or Redis. Avro guarantees types and enum symbols; these
 * add what the types cannot say: a UUID is a UUID, a timestamp is a date PostgreSQL and
 * JavaScript can both hold, a count is positive. A record failing one is set aside with every
 * failing field named (dead records), never applied and never retried.
 */

/** One failing field, named as in the record's schema (`error.retry_after_ms`). */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

/** 9999-12-31T23:59:59.999Z: the latest timestamp accepted (JavaScript reaches 275760, PostgreSQL 294276). */
export const MAX_TIMESTAMP_MS = 253_402_300_799_999;

/** Longest identifier-like text accepted (worker ids, tenants, types, error classes). */
export const MAX_NAME_CHARS = 256;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RESOURCE_CLASS_RE = /^[a-z][a-z0-9-]{0,31}$/;

type Check = (value: unknown) => string | undefined;

const uuid: Check = (v) => (typeof v === 'string' && UUID_RE.test(v) ? undefined : 'must be a UUID');

const timestamp: Check = (v) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_TIMESTAMP_MS
    ? undefined
    : `must be a time in ms between 1970 and 9999, got ${String(v)}`;

const optionalTimestamp: Check = (v) => (v === null || v === undefined ? undefined : timestamp(v));

const atLeast =
  (min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min
      ? undefined
      : `must be an integer >= ${min}, got ${String(v)}`;

/** Non-empty, bounded, no NUL (PostgreSQL's text refuses it). */
const name: Check = (v) =>
  typeof v === 'string' && v.length > 0 && v.length <= MAX_NAME_CHARS && !v.includes('\u0000')
    ? undefined
    : `must be 1-${MAX_NAME_CHARS} characters without NUL`;

const resourceClass: Check = (v) =>
  typeof v === 'string' && RESOURCE_CLASS_RE.test(v) ? undefined : `must match ${RESOURCE_CLASS_RE.source}`;

const optionalResourceClass: Check = (v) => (v === null || v === undefined ? undefined : resourceClass(v));

/** Runs `checks` over `record`'s fields; returns every failure. */
function problems(record: object, checks: Readonly<Record<string, Check>>, prefix = ''): FieldProblem[] {
  const values = record as Readonly<Record<string, unknown>>;
  return Object.entries(checks).flatMap(([field, check]) => {
    const message = check(values[field]);
    return message === undefined ? [] : [{ field: `${prefix}${field}`, message }];
  });
}

const TASK_RESULT: Readonly<Record<string, Check>> = {
  job_id: uuid,
  tenant_id: name,
  attempt: atLeast(1),
  fence: atLeast(1),
  epoch: atLeast(0),
  shard: atLeast(0),
  worker_id: name,
  due_at: timestamp,
  started_at: timestamp,
  finished_at: timestamp,
  dispatched_at: optionalTimestamp,
  resource_class: optionalResourceClass,
};

/**
 * A result's failing fields. Its texts (error class and message) are not judged here: the tracker
 * stores them bounded (clipped, NUL removed), since a handler's message is the user's data.
 * `retry_after_ms` must not be negative; above the longest retry delay it is capped by the retry
 * decision, not refused.
 */
export function taskResultProblems(r: TaskResultRecord): FieldProblem[] {
  const out = problems(r, TASK_RESULT);
  const after = r.error?.retry_after_ms;
  if (after !== null && after !== undefined) {
    const message = atLeast(0)(after);
    if (message !== undefined) out.push({ field: 'error.retry_after_ms', message });
  }
  return out;
}

/** The job's own fields, as a job event and a task both carry them. */
const JOB: Readonly<Record<string, Check>> = {
  job_id: uuid,
  tenant_id: name,
  job_type: name,
  resource_class: resourceClass,
  due_at: timestamp,
  deadline_at: optionalTimestamp,
  attempt: atLeast(1),
  max_attempts: atLeast(1),
  shard: atLeast(0),
  version: atLeast(1),
};

const JOB_EVENT: Readonly<Record<string, Check>> = {
  event_id: name,
  ...JOB,
  fence: atLeast(0),
  occurred_at: timestamp,
};

/** A job event's failing fields (the delay tier puts a SCHEDULED one into Redis as it is). */
export function jobEventProblems(e: JobEventRecord): FieldProblem[] {
  return problems(e, JOB_EVENT);
}

const TASK_DISPATCH: Readonly<Record<string, Check>> = {
  ...JOB,
  fence: atLeast(1),
  epoch: atLeast(0),
  dispatched_at: timestamp,
};

/** A task's failing fields (a worker holds, leases and runs it by them). */
export function taskDispatchProblems(t: TaskDispatchRecord): FieldProblem[] {
  return problems(t, TASK_DISPATCH);
}

/** What a consumer stores of a text it does not judge: NUL removed, at most `max` characters. */
export function boundedText(s: string, max: number): string {
  const clean = s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** "job_id must be a UUID; fence must be…": the problems in one line, for logs and messages. */
export function describeProblems(found: readonly FieldProblem[]): string {
  return found.map((p) => `${p.field} ${p.message}`).join('; ');
}
