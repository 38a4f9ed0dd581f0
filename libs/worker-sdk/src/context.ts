import type { TaskDispatchRecord } from '@kairos/schemas';

/** What a handler knows about the attempt it runs. */
export interface TaskContext {
  readonly jobId: string;
  readonly tenantId: string;
  readonly type: string;
  readonly resourceClass: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Monotonic fencing token of this attempt: a later attempt always has a higher one. */
  readonly fence: number;
  /** Epoch of the partition owner that dispatched it. */
  readonly epoch: number;
  readonly shard: number;
  /** Stable across every attempt of this job: pass it to external APIs as their idempotency key. */
  readonly idempotencyKey: string;
  readonly dueAt: Date;
  readonly deadlineAt: Date | null;
  readonly dispatchedAt: Date;
  /** Version of the job this attempt was dispatched at. */
  readonly version: number;
  /**
   * Aborted when the job is cancelled (reason: JobCancelled), when this worker turns out to be a
   * zombie (reason: ZombieWriteSuppressed), or when the worker stops past its shutdown timeout.
   */
  readonly signal: AbortSignal;
  /** Renews the lease now (it is also renewed every heartbeat interval on its own). */
  heartbeat(): Promise<void>;
}

export function taskContext(
  d: TaskDispatchRecord,
  signal: AbortSignal,
  heartbeat: () => Promise<void>,
): TaskContext {
  return {
    jobId: d.job_id,
    tenantId: d.tenant_id,
    type: d.job_type,
    resourceClass: d.resource_class,
    attempt: d.attempt,
    maxAttempts: d.max_attempts,
    fence: d.fence,
    epoch: d.epoch,
    shard: d.shard,
    idempotencyKey: d.idempotency_key,
    dueAt: new Date(d.due_at),
    deadlineAt: d.deadline_at === null ? null : new Date(d.deadline_at),
    dispatchedAt: new Date(d.dispatched_at),
    version: d.version,
    signal,
    heartbeat,
  };
}

/** A handler: resolve for success, throw (or reject) for failure. */
export type Handler<P = unknown> = (payload: P, ctx: TaskContext) => Promise<void> | void;
