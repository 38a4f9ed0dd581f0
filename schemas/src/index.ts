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
  error: { error_class: string; message: string } | null;
  worker_id: string;
  due_at: number;
  started_at: number;
  finished_at: number;
}
