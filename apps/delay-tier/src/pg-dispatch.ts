import { KairosError } from '@kairos/core';
import {
  expireJobs,
  holdPartitionEpoch,
  inTransaction,
  lockDueJobs,
  markQueued,
  writeOutbox,
  type Pool,
} from '@kairos/db';
import type { Producer } from 'kafkajs';
import type { OccurrenceGate } from './occurrence-gate.js';
import { hotRecordFromJob, type HotRecord } from './record.js';
import type { TaskMessages } from './task-messages.js';

export interface PgDispatchDeps {
  readonly pool: Pool;
  readonly producer: Producer;
  readonly messages: TaskMessages;
  readonly gate: OccurrenceGate;
}

/**
 * PostgreSQL-only scheduling of one partition (Redis refused writes): due SCHEDULED jobs are read
 * in bounded batches by due time, locked, produced, and marked QUEUED in one transaction, fenced
 * by the partition epoch. A crash before the commit leaves them SCHEDULED: dispatched again, never
 * lost; a cancel waits for the lock and then finds the job QUEUED.
 */
export async function dispatchFromPostgres(
  deps: PgDispatchDeps,
  partition: number,
  epoch: number,
  nowMs: number,
  leadMs: number,
  limit: number,
): Promise<{ sent: HotRecord[]; expired: HotRecord[] }> {
  return inTransaction(deps.pool, async (tx) => {
    if (!(await holdPartitionEpoch(tx, partition, epoch))) {
      throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`);
    }
    const jobs = await lockDueJobs(tx, partition, new Date(nowMs + leadMs), limit, new Date(nowMs));
    const records = jobs.map(hotRecordFromJob);
    const expired = records.filter((r) => r.deadline_at !== null && r.deadline_at < nowMs);
    // Runs of schedules: the overlap policy may skip, hold back or cancel before producing.
    const gated = await deps.gate.apply(
      tx,
      jobs.flatMap((j) =>
        expired.some((r) => r.job_id === j.id)
          ? []
          : [{ id: j.id, scheduleId: j.occurrence?.scheduleId ?? null, fence: j.fence }],
      ),
      nowMs,
    );
    await writeOutbox(tx, gated.events);
    const live = records.filter((r) => !expired.includes(r) && !gated.withheld.has(r.job_id));
    await expireJobs(
      tx,
      expired.map((r) => ({
        jobId: r.job_id,
        dueAt: new Date(r.due_at),
        deadlineAt: new Date(r.deadline_at ?? 0),
      })),
    );
    for (const [topic, group] of deps.messages.byTopic(live)) {
      const messages = await Promise.all(group.map((r) => deps.messages.build(r, epoch, nowMs)));
      await deps.producer.send({ topic, acks: -1, messages });
    }
    await markQueued(
      tx,
      live.map((r) => ({ jobId: r.job_id, dueAt: new Date(r.due_at) })),
      new Date(nowMs),
      epoch,
    );
    return { sent: live, expired };
  });
}
