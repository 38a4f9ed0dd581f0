import type { Job } from '@kairos/core';
import type { TaskResultRecord } from '@kairos/schemas';

/** Error class of an attempt whose worker was lost (its lease expired, or Redis lost the lease). */
export const LEASE_EXPIRED = 'LeaseExpired';

/**
 * The failed, ambiguous result of a running attempt whose worker was lost, as the delay tier's
 * reaper and the tracker's watchdog report it on kairos.task-results. The tracker then decides as
 * for any failure, fenced by the attempt's fence: a retry with a higher fence after its backoff,
 * or the dead-letter topic; the lost worker, should it wake up, is a zombie.
 */
export function lostAttemptResult(
  job: Pick<Job, 'id' | 'tenantId' | 'attempt' | 'fence' | 'shard' | 'dueAt' | 'dispatchedAt' | 'startedAt'>,
  epoch: number,
  workerId: string,
  message: string,
  nowMs: number,
): TaskResultRecord {
  return {
    job_id: job.id,
    tenant_id: job.tenantId,
    attempt: job.attempt,
    fence: job.fence,
    epoch,
    shard: job.shard,
    outcome: 'FAILED',
    error: {
      error_class: LEASE_EXPIRED,
      message,
      // It may have had its effect before it was lost: retried, relying on idempotency.
      failure_class: 'ambiguous',
      retry_after_ms: null,
    },
    worker_id: workerId,
    due_at: job.dueAt.getTime(),
    started_at: (job.startedAt ?? job.dispatchedAt ?? job.dueAt).getTime(),
    finished_at: nowMs,
  };
}
