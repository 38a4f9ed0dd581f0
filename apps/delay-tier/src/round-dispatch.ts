import { isKairosError, retryOnSerialization } from '@kairos/core';
import {
  claimJobsAsOwners,
  expireJobs,
  forgetDispatchedAttempts,
  inTransaction,
  writeOutbox,
  type Pool,
} from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Message, Producer } from 'kafkajs';
import type { OccurrenceGate } from './occurrence-gate.js';
import type { HotRecord } from './record.js';
import type { TaskMessages } from './task-messages.js';

/** What one partition's pop of this round gave: its due jobs, popped under `epoch` at `nowMs`. */
export interface PoppedPartition {
  readonly partition: number;
  readonly epoch: number;
  /** Redis TIME of the pop, ms: the jobs' dispatch time (never before their due time). */
  readonly nowMs: number;
  readonly records: readonly HotRecord[];
}

export interface RoundDispatchDeps {
  readonly hot: HotSet;
  readonly pool: Pool;
  readonly producer: Producer;
  readonly messages: TaskMessages;
  readonly gate: OccurrenceGate;
  readonly log: Logger;
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  readonly onExpired?: (record: HotRecord) => void;
}

/** Per partition: its jobs settled and acknowledged, or its epoch found superseded. */
export type RoundResult = ReadonlyMap<number, 'done' | 'stale'>;

/**
 * Dispatches what a round popped from every partition at once: expired jobs are marked EXPIRED;
 * the live ones are claimed, produced and committed in one transaction per task topic for all
 * partitions together (each job version-checked, each partition's epoch held and checked), so a
 * round costs a few round trips and one durable commit per resource class, not per partition
 * (claimed one partition after another, a job waited for every earlier partition's commit).
 * Then each partition's settled jobs are acknowledged in Redis. A topic whose claim or produce
 * failed keeps its jobs in flight (reclaimed and retried) without holding back the others; a
 * partition whose epoch was superseded claims nothing and is reported stale, unacknowledged.
 */
export async function dispatchRound(
  deps: RoundDispatchDeps,
  popped: readonly PoppedPartition[],
): Promise<RoundResult> {
  const byPartition = new Map(popped.map((p) => [p.partition, p]));
  const at = (r: HotRecord) => byPartition.get(r.shard)?.nowMs ?? 0;
  const records = popped.flatMap((p) => p.records);
  // Deadline passed by Redis time: the job is not worth running any more.
  const expired = records.filter((r) => r.deadline_at !== null && r.deadline_at < at(r));
  await expireJobs(
    deps.pool,
    expired.map((r) => ({
      jobId: r.job_id,
      dueAt: new Date(r.due_at),
      deadlineAt: new Date(r.deadline_at ?? 0),
    })),
  );
  // Reported as soon as PostgreSQL has it: a later ack refused for a stale epoch must not hide it.
  for (const r of expired) deps.onExpired?.(r);
  const settled = new Set<HotRecord>(expired);
  const stale = new Set<number>();
  const live = records.filter((r) => !settled.has(r));
  for (const [topic, group] of deps.messages.byTopic(live)) {
    await dispatchTopic(deps, topic, group, byPartition, { settled, stale });
  }
  await Promise.all(
    popped
      .filter((p) => !stale.has(p.partition))
      .map((p) =>
        acknowledge(deps, p, settled).catch((err: unknown) => void onAckFailure(deps, p, err, stale)),
      ),
  );
  return new Map(popped.map((p) => [p.partition, stale.has(p.partition) ? 'stale' : 'done']));
}

/** Removes the partition's settled jobs from its in-flight set in Redis. */
function acknowledge(deps: RoundDispatchDeps, p: PoppedPartition, settled: ReadonlySet<HotRecord>) {
  return deps.hot.ack(
    p.partition,
    p.epoch,
    p.records.filter((r) => settled.has(r)).map((r) => ({ jobId: r.job_id, version: r.version })),
  );
}

/**
 * An acknowledgement refused for a superseded epoch makes the partition stale; any other failure
 * only leaves the jobs in flight: reclaimed later, their claim then finds them dispatched.
 */
function onAckFailure(deps: RoundDispatchDeps, p: PoppedPartition, err: unknown, stale: Set<number>): void {
  if (isKairosError(err, 'STALE_EPOCH')) stale.add(p.partition);
  else
    deps.log.warn(
      { err, partition: p.partition },
      'acknowledging dispatched jobs failed; they are reclaimed',
    );
}

/**
 * One task topic's jobs of the round: claimed (only those of partitions whose epoch holds),
 * gated by their schedules' overlap policies, produced with acks from every in-sync replica and
 * committed, in one transaction. Adds what it settled, and the partitions found stale.
 */
async function dispatchTopic(
  deps: RoundDispatchDeps,
  topic: string,
  group: readonly HotRecord[],
  popped: ReadonlyMap<number, PoppedPartition>,
  out: { readonly settled: Set<HotRecord>; readonly stale: Set<number> },
): Promise<void> {
  const epochOf = (r: HotRecord) => popped.get(r.shard)?.epoch ?? 0;
  const nowOf = (r: HotRecord) => popped.get(r.shard)?.nowMs ?? 0;
  const messages = await Promise.all(group.map((r) => deps.messages.build(r, epochOf(r), nowOf(r))));
  const owners = [...new Set(group.map((r) => r.shard))].map((partition) => ({
    partition,
    epoch: popped.get(partition)?.epoch ?? 0,
  }));
  // The latest pop of the round: at or after every job's own pop, so never before its due time.
  const dispatchedAt = Math.max(...group.map(nowOf));
  try {
    const { current, claimed } = await retryOnSerialization(() =>
      inTransaction(deps.pool, (tx) =>
        claimAndProduce(deps, tx, { topic, group, messages, owners, dispatchedAt }),
      ),
    );
    for (const { partition } of owners) if (!current.has(partition)) out.stale.add(partition);
    // Unclaimed jobs of current partitions were cancelled, rescheduled or dispatched meanwhile.
    for (const r of group) if (current.has(r.shard)) out.settled.add(r);
    for (const r of group) if (claimed.has(r.job_id)) deps.onDispatched?.(r, nowOf(r));
  } catch (err) {
    deps.log.error({ err, topic, jobs: group.length }, 'dispatch to a task topic failed; will retry');
  }
}

interface TopicClaim {
  readonly topic: string;
  readonly group: readonly HotRecord[];
  readonly messages: readonly Message[];
  readonly owners: readonly { readonly partition: number; readonly epoch: number }[];
  readonly dispatchedAt: number;
}

/** Inside the transaction: claim, overlap gate, its events, then the produce before COMMIT. */
async function claimAndProduce(
  deps: RoundDispatchDeps,
  tx: Parameters<Parameters<typeof inTransaction>[1]>[0],
  c: TopicClaim,
): Promise<{ current: ReadonlySet<number>; claimed: ReadonlySet<string> }> {
  const { current, claimed } = await claimJobsAsOwners(
    tx,
    c.owners,
    c.group.map((r) => ({
      jobId: r.job_id,
      dueAt: new Date(r.due_at),
      version: r.version,
      partition: r.shard,
    })),
    new Date(c.dispatchedAt),
  );
  // Runs of schedules: the overlap policy may skip, hold back or cancel before producing.
  const gated = await deps.gate.apply(tx, claimed, c.dispatchedAt);
  await writeOutbox(tx, gated.events);
  const ids = new Set(claimed.flatMap((j) => (gated.withheld.has(j.id) ? [] : [j.id])));
  await forgetDispatchedAttempts(
    tx,
    claimed.filter((j) => !ids.has(j.id)),
  );
  const out = c.messages.filter((_, i) => ids.has(c.group[i]?.job_id ?? ''));
  if (out.length > 0) await deps.producer.send({ topic: c.topic, acks: -1, messages: out });
  return { current, claimed: ids };
}
