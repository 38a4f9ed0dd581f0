import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The Avro schemas, read from the .avsc files beside this package (the single source of truth)
 * and shipped with it, so the SDKs work outside this repository.
 */
const DIR = resolve(import.meta.dirname, '..');

function load(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(DIR, file), 'utf8')) as Record<string, unknown>;
}

export const SCHEMAS = {
  jobEvent: load('job-event.avsc'),
  taskDispatch: load('task-dispatch.avsc'),
  taskResult: load('task-result.avsc'),
  dlqEntry: load('dlq-entry.avsc'),
} as const;

export type SchemaName = keyof typeof SCHEMAS;

/** TS views of the records (timestamps are epoch milliseconds). */
export interface JobEventRecord {
  event_id: string;
  event_type: 'SCHEDULED' | 'CANCELLED';
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  deadline_at: number | null;
  version: number;
  fence: number;
  attempt: number;
  max_attempts: number;
  routing_key: string;
  shard: number;
  occurred_at: number;
}

export interface TaskDispatchRecord {
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  deadline_at: number | null;
  attempt: number;
  max_attempts: number;
  fence: number;
  epoch: number;
  shard: number;
  version: number;
  idempotency_key: string;
  dispatched_at: number;
}

export interface TaskResultRecord {
  job_id: string;
  tenant_id: string;
  attempt: number;
  fence: number;
  epoch: number;
  shard: number;
  outcome: 'SUCCEEDED' | 'FAILED';
  error: TaskErrorRecord | null;
  worker_id: string;
  due_at: number;
  started_at: number;
  finished_at: number;
}

/**
 * Why an attempt failed. `failure_class` is one of transient, throttled, permanent, ambiguous
 * (a string so new classes can be added); `retry_after_ms` is set for throttled failures. Results
 * written before these fields existed decode without them: readers treat that as ambiguous.
 */
export interface TaskErrorRecord {
  error_class: string;
  message: string;
  failure_class: string;
  retry_after_ms: number | null;
}

/** One failed attempt in a dead letter's error history. */
export interface DlqAttemptErrorRecord {
  attempt: number;
  fence: number;
  worker_id: string;
  error_class: string;
  failure_class: string;
  message: string;
  started_at: number;
  finished_at: number;
}

/** A job that failed for good, on kairos.dlq.<resource class> (key = job id). */
export interface DlqEntryRecord {
  event_id: string;
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  attempts: number;
  max_attempts: number;
  failure_class: string;
  reason: 'permanent' | 'exhausted';
  error_history: DlqAttemptErrorRecord[];
  failed_at: number;
}
