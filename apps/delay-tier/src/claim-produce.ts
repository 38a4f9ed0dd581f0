import {
  countSkippedRuns,
  expireJobs,
  inTransaction,
  writeOutbox,
  type ClaimedJob,
  type Pool,
  type PoolClient,
} from '@kairos/db';
import type { Message, Producer } from 'kafkajs';
import type { OccurrenceGate } from './occurrence-gate.js';
import type { HotRecord } from './record.js';
import type { TaskMessages } from './task-messages.js';

export interface ClaimProduceDeps {
  readonly pool: Pool;
  readonly producer: Producer;
  readonly messages: TaskMessages;
  /** Overlap policy of schedules' runs, applied in the claim transaction. */
  readonly gate: OccurrenceGate;
  /** Called once the transaction committed: what was produced, what expired instead. */
  readonly report: (sent: readonly HotRecord[], expired: readonly HotRecord[], nowMs: number) => void;
  /** Called once the transaction committed: runs of schedules the gate skipped, per schedule. */
  readonly onSkipped?: (skipped: ReadonlyMap<string, number>) => void;
}

/** What one claim took, locked for its transaction. */
export interface Claim {
  /** Jobs claimed for dispatch, as the overlap gate needs them. */
  readonly claimed: readonly ClaimedJob[];
  /** Their records (unclaimed ones may be among them: they are not produced). */
  readonly records: readonly HotRecord[];
  /** Jobs whose deadline passed: expired in this transaction instead. */
  readonly expired: readonly HotRecord[];
}

/** What a dispatch mode does itself inside the shared transaction. */
export interface ClaimStep {
  /**
   * Claims (or locks) the jobs to dispatch, holding their partitions' epoch rows for the rest of
   * the transaction (so no dispatch commits once a newer owner took a partition); claims nothing
   * of a partition its epoch no longer owns (throwing STALE_EPOCH when that is all it had).
   */
  claim(tx: PoolClient): Promise<Claim>;
  /** The task message of a claimed job (built before the transaction, or now). */
  message(record: HotRecord): Promise<Message>;
  /** After the overlap gate, before producing; `withheld`: the claimed jobs it held back. */
  beforeProduce?(tx: PoolClient, claim: Claim, withheld: readonly ClaimedJob[]): Promise<void>;
  /** After Kafka acknowledged `sent`, before the commit. */
  afterProduce?(tx: PoolClient, sent: readonly HotRecord[]): Promise<void>;
}

/**
 * The one claim-and-produce path of both dispatch modes (hot set, PostgreSQL-only): in one
 * transaction the mode claims its jobs under the partition's epoch, the overlap gate decides on
 * runs of schedules and its events go to the outbox, the rest is produced to the task topics
 * (acks from all replicas) before the commit, and what was dispatched is reported after it. A crash before the commit leaves the jobs
 * SCHEDULED: dispatched again, never lost.
 */
export async function claimAndProduce(
  deps: ClaimProduceDeps,
  nowMs: number,
  step: ClaimStep,
): Promise<{ sent: HotRecord[]; expired: readonly HotRecord[] }> {
  const done = await inTransaction(deps.pool, async (tx) => {
    const claim = await step.claim(tx);
    // Runs of schedules: the overlap policy may skip, hold back or cancel before producing.
    const gated = await deps.gate.apply(tx, claim.claimed, nowMs);
    await writeOutbox(tx, gated.events);
    await step.beforeProduce?.(
      tx,
      claim,
      claim.claimed.filter((c) => gated.withheld.has(c.id)),
    );
    const ids = new Set(claim.claimed.flatMap((c) => (gated.withheld.has(c.id) ? [] : [c.id])));
    const sent = claim.records.filter((r) => ids.has(r.job_id));
    // One request for every topic the class's tasks are routed to (its services', waiting).
    const topicMessages = await Promise.all(
      [...deps.messages.byTopic(sent)].map(async ([topic, group]) => ({
        topic,
        messages: await Promise.all(group.map((r) => step.message(r))),
      })),
    );
    if (topicMessages.length > 0) await deps.producer.sendBatch({ acks: -1, topicMessages });
    await step.afterProduce?.(tx, sent);
    // Last: the schedules' counters, locked no longer than the commit.
    await countSkippedRuns(
      tx,
      [...gated.skippedBy].map(([scheduleId, skipped]) => ({ scheduleId, misfired: 0, skipped })),
    );
    return { sent, expired: claim.expired, skippedBy: gated.skippedBy };
  });
  deps.report(done.sent, done.expired, nowMs);
  if (done.skippedBy.size > 0) deps.onSkipped?.(done.skippedBy);
  return done;
}

/** Records whose deadline passed by `nowMs` (Redis time): not worth running any more. */
export function pastDeadline(records: readonly HotRecord[], nowMs: number): HotRecord[] {
  return records.filter((r) => r.deadline_at !== null && r.deadline_at < nowMs);
}

/** Marks the records EXPIRED in PostgreSQL (`db`: the pool, or the claim's transaction). */
export async function expireRecords(db: Pool | PoolClient, records: readonly HotRecord[]): Promise<void> {
  await expireJobs(
    db,
    records.map((r) => ({
      jobId: r.job_id,
      dueAt: new Date(r.due_at),
      deadlineAt: new Date(r.deadline_at ?? 0),
    })),
  );
}
