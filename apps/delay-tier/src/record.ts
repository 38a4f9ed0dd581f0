import type { Job } from '@kairos/core';
import type { HotJob } from '@kairos/redis';
import type { JobEventRecord, TaskDispatchRecord } from '@kairos/schemas';

/** What the hot set keeps per job: everything a dispatch needs, so dispatching reads no database. */
export interface HotRecord {
  readonly job_id: string;
  readonly tenant_id: string;
  readonly job_type: string;
  readonly resource_class: string;
  readonly payload: string;
  readonly due_at: number;
  readonly deadline_at: number | null;
  readonly attempt: number;
  readonly max_attempts: number;
  readonly fence: number;
  readonly shard: number;
  readonly version: number;
  readonly traceparent: string | null;
}

export function hotRecord(e: JobEventRecord, traceparent: string | null): HotRecord {
  return {
    job_id: e.job_id,
    tenant_id: e.tenant_id,
    job_type: e.job_type,
    resource_class: e.resource_class,
    payload: e.payload,
    due_at: e.due_at,
    deadline_at: e.deadline_at,
    attempt: e.attempt,
    max_attempts: e.max_attempts,
    fence: e.fence,
    shard: e.shard,
    version: e.version,
    traceparent,
  };
}

export function taskDispatch(r: HotRecord, epoch: number, dispatchedAt: number): TaskDispatchRecord {
  return {
    job_id: r.job_id,
    tenant_id: r.tenant_id,
    job_type: r.job_type,
    resource_class: r.resource_class,
    payload: r.payload,
    due_at: r.due_at,
    deadline_at: r.deadline_at,
    attempt: r.attempt,
    max_attempts: r.max_attempts,
    fence: r.fence,
    epoch,
    shard: r.shard,
    version: r.version,
    // Stable across every attempt of the job: handlers pass it to external APIs.
    idempotency_key: r.job_id,
    dispatched_at: dispatchedAt,
  };
}

/** The hot record of a job read back from PostgreSQL (rebuilding a partition's hot set). */
export function hotRecordFromJob(job: Job): HotRecord {
  return {
    job_id: job.id,
    tenant_id: job.tenantId,
    job_type: job.type,
    resource_class: job.resourceClass,
    payload: job.payload,
    due_at: job.dueAt.getTime(),
    deadline_at: job.deadlineAt?.getTime() ?? null,
    attempt: job.attempt,
    max_attempts: job.maxAttempts,
    fence: job.fence,
    shard: job.shard,
    version: job.version,
    traceparent: job.traceparent ?? null,
  };
}

/** The hot-set entry of a record: where it queues (class, tenant), when, at which version. */
export function hotJob(r: HotRecord): HotJob {
  return {
    jobId: r.job_id,
    dueAtMs: r.due_at,
    version: r.version,
    resourceClass: r.resource_class,
    tenant: r.tenant_id,
    record: JSON.stringify(r),
  };
}
