import type { TaskDispatchRecord } from '@kairos/schemas';
import type { WorkerLogger } from './options.js';

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
   * W3C `traceparent` of this attempt: the handler's span when an OpenTelemetry SDK records it,
   * else the task's. Its trace id is the job's, the same for every attempt: pass it on to the
   * calls the handler makes. Null only for a task dispatched without one (an older delay tier).
   */
  readonly traceparent: string | null;
  /** The worker's logger for this attempt: every line carries jobId, fence and traceparent. */
  readonly log: WorkerLogger;
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
  trace: { readonly traceparent: string | null; readonly log: WorkerLogger },
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
    traceparent: trace.traceparent,
    log: trace.log,
    signal,
    heartbeat,
  };
}

/** A handler: resolve for success, throw (or reject) for failure. */
export type Handler<P = unknown> = (payload: P, ctx: TaskContext) => Promise<void> | void;
