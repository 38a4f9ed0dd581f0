import { isKairosError, retryOnSerialization } from '@kairos/core';
import { claimJobsAsOwners, forgetDispatchedAttempts } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Message } from 'kafkajs';
import {
  claimAndProduce,
  expireRecords,
  pastDeadline,
  type ClaimProduceDeps,
  type ClaimStep,
} from './claim-produce.js';
import type { HotRecord } from './record.js';

/** What one partition's pop of this round gave: its due jobs, popped under `epoch` at `nowMs`. */
export interface PoppedPartition {
  readonly partition: number;
  readonly epoch: number;
  /** Redis TIME of the pop, ms (its jobs were due by then). */
  readonly nowMs: number;
  readonly records: readonly HotRecord[];
}

export interface RoundDispatchDeps extends ClaimProduceDeps {
  readonly hot: HotSet;
  readonly log: Logger;
}

export interface RoundResult {
  /** Per partition: its jobs settled and acknowledged, or its epoch found superseded. */
  readonly outcome: ReadonlyMap<number, 'done' | 'stale'>;
  /**
   * Per partition (of those not stale), the live jobs whose task topic's claim or produce failed:
   * still in flight under the epoch, for the caller to retry (the in-flight reclaim is only the
   * net for a dispatcher that died).
   */
  readonly unsent: ReadonlyMap<number, readonly HotRecord[]>;
}

/**
 * Dispatches what a round popped from every hot partition at once: expired jobs are marked
 * EXPIRED; the live ones go through claimAndProduce in one transaction per task topic for all
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
  const expired = popped.flatMap((p) => pastDeadline(p.records, p.nowMs));
  await expireRecords(deps.pool, expired);
  // Reported as soon as PostgreSQL has it: a later ack refused for a stale epoch must not hide it.
  deps.report([], expired, Math.max(...popped.map((p) => p.nowMs)));
  const settled = new Set<HotRecord>(expired);
  const stale = new Set<number>();
  const failed: HotRecord[] = [];
  const live = popped.flatMap((p) => p.records).filter((r) => !settled.has(r));
  // One transaction per class, whatever number of services its tasks are routed to.
  for (const [topic, group] of deps.messages.byTopic(live, 'class')) {
    try {
      const current = await dispatchTopic(deps, group, byPartition);
      // Unclaimed jobs of current partitions were cancelled, rescheduled or dispatched meanwhile.
      for (const r of group) if (current.has(r.shard)) settled.add(r);
      for (const p of new Set(group.map((r) => r.shard))) if (!current.has(p)) stale.add(p);
    } catch (err) {
      failed.push(...group);
      deps.log.error({ err, topic, jobs: group.length }, 'dispatch to a task topic failed; will retry');
    }
  }
  await Promise.all(
    popped
      .filter((p) => !stale.has(p.partition))
      .map((p) => acknowledge(deps, p, settled).catch((err: unknown) => onAckFailure(deps, p, err, stale))),
  );
  const unsent = new Map<number, HotRecord[]>();
  for (const r of failed) if (!stale.has(r.shard)) unsent.set(r.shard, [...(unsent.get(r.shard) ?? []), r]);
  return {
    outcome: new Map(popped.map((p) => [p.partition, stale.has(p.partition) ? 'stale' : 'done'])),
    unsent,
  };
}

/**
 * One task topic's jobs of the round, in one transaction; returns the partitions whose epoch
 * held. Messages are encoded before it (no encoding while the claimed rows are locked), each with
 * its partition's epoch and pop time; the claim is stamped with the round's latest pop time, at
 * or after every job's own pop, so never before its due time.
 */
async function dispatchTopic(
  deps: RoundDispatchDeps,
  group: readonly HotRecord[],
  popped: ReadonlyMap<number, PoppedPartition>,
): Promise<ReadonlySet<number>> {
  const of = (r: HotRecord) => popped.get(r.shard) ?? { epoch: 0, nowMs: 0 };
  const messages = new Map(
    await Promise.all(
      group.map(async (r) => [r.job_id, await deps.messages.build(r, of(r).epoch, of(r).nowMs)] as const),
    ),
  );
  const dispatchedAt = Math.max(...group.map((r) => of(r).nowMs));
  let current: ReadonlySet<number> = new Set();
  const step = poppedClaim(group, messages, popped, dispatchedAt, (c) => (current = c));
  await retryOnSerialization(() => claimAndProduce(deps, dispatchedAt, step));
  return current;
}

/**
 * The hot set's claim of one round: only a popped job still SCHEDULED at its popped version is
 * claimed, and only while its partition's epoch still owns it (checked in the same statement);
 * each claimed attempt's row is written with it, and forgotten again for a run the overlap gate
 * withholds.
 */
function poppedClaim(
  records: readonly HotRecord[],
  messages: ReadonlyMap<string, Message>,
  popped: ReadonlyMap<number, PoppedPartition>,
  dispatchedAt: number,
  onCurrent: (partitions: ReadonlySet<number>) => void,
): ClaimStep {
  const owners = [...new Set(records.map((r) => r.shard))].map((partition) => ({
    partition,
    epoch: popped.get(partition)?.epoch ?? 0,
  }));
  return {
    claim: async (tx) => {
      const { current, claimed } = await claimJobsAsOwners(
        tx,
        owners,
        records.map((r) => ({
          jobId: r.job_id,
          dueAt: new Date(r.due_at),
          version: r.version,
          partition: r.shard,
        })),
        new Date(dispatchedAt),
      );
      onCurrent(current);
      return { claimed, records, expired: [] };
    },
    message: (r) => {
      const message = messages.get(r.job_id);
      return message ? Promise.resolve(message) : Promise.reject(new Error(`no message for ${r.job_id}`));
    },
    beforeProduce: (tx, _claim, withheld) => forgetDispatchedAttempts(tx, withheld),
  };
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
