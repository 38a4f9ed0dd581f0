import { KairosError } from '@kairos/core';
import { holdPartitionEpoch, lockDueJobs, markQueued } from '@kairos/db';
import {
  claimAndProduce,
  expireRecords,
  pastDeadline,
  type ClaimProduceDeps,
  type ClaimStep,
} from './claim-produce.js';
import { hotRecordFromJob, type HotRecord } from './record.js';

/**
 * PostgreSQL-only scheduling of one partition (Redis refused writes): due SCHEDULED jobs are read
 * in bounded batches by due time, locked, produced, and marked QUEUED in one transaction, fenced
 * by the partition epoch (claimAndProduce). A crash before the commit leaves them SCHEDULED:
 * dispatched again, never lost; a cancel waits for the lock and then finds the job QUEUED.
 */
export function dispatchFromPostgres(
  deps: ClaimProduceDeps,
  partition: number,
  epoch: number,
  nowMs: number,
  leadMs: number,
  limit: number,
): Promise<{ sent: HotRecord[]; expired: readonly HotRecord[] }> {
  return claimAndProduce(deps, nowMs, lockedDue(deps, partition, epoch, nowMs, leadMs, limit));
}

/** The partition's due jobs, locked; those past their deadline expire instead of being produced. */
function lockedDue(
  deps: ClaimProduceDeps,
  partition: number,
  epoch: number,
  nowMs: number,
  leadMs: number,
  limit: number,
): ClaimStep {
  return {
    async claim(tx) {
      // Held for the rest of the transaction: a new owner's epoch waits for this dispatch.
      if (!(await holdPartitionEpoch(tx, partition, epoch))) {
        throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`);
      }
      const jobs = await lockDueJobs(tx, partition, new Date(nowMs + leadMs), limit, new Date(nowMs));
      const records = jobs.map(hotRecordFromJob);
      const expired = pastDeadline(records, nowMs);
      const live = jobs.filter((j) => !expired.some((r) => r.job_id === j.id));
      return {
        claimed: live.map((j) => ({
          id: j.id,
          scheduleId: j.occurrence?.scheduleId ?? null,
          fence: j.fence,
        })),
        records: records.filter((r) => !expired.includes(r)),
        expired,
      };
    },
    // Built in the transaction: the jobs were only read in it.
    message: (r) => deps.messages.build(r, epoch, nowMs),
    beforeProduce: (tx, claim) => expireRecords(tx, claim.expired),
    // Queued only once Kafka has them, in the same transaction as the epoch check.
    async afterProduce(tx, sent) {
      await markQueued(
        tx,
        sent.map((r) => ({ jobId: r.job_id, dueAt: new Date(r.due_at) })),
        new Date(nowMs),
        epoch,
      );
    },
  };
}
