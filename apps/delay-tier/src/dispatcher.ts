import type { OccurrenceGate } from '@kairos/commands';
import { isKairosError, KairosError, PollLoop } from '@kairos/core';
import {
  claimJobsForDispatch,
  expireJobs,
  holdPartitionEpoch,
  inTransaction,
  recordDispatchedAttempts,
  writeOutbox,
  type Pool,
} from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Producer } from 'kafkajs';
import type { Ownership } from './ownership.js';
import type { PartitionModes } from './partition-modes.js';
import { dispatchFromPostgres } from './pg-dispatch.js';
import type { HotRecord } from './record.js';
import type { Release } from './release.js';
import type { TaskMessages } from './task-messages.js';

export interface DispatcherOptions {
  readonly hot: HotSet;
  readonly ownership: Ownership;
  readonly modes: PartitionModes;
  readonly release: Release;
  /** Where dispatches are claimed (fenced by epoch and version) and deadlines expire jobs. */
  readonly pool: Pool;
  readonly producer: Producer;
  readonly messages: TaskMessages;
  /** Overlap policy of schedules' runs, applied in the claim transaction. */
  readonly gate: OccurrenceGate;
  readonly log: Logger;
  /** Most jobs popped per class per partition per round. */
  readonly batchSize: number;
  /** Partitions dispatched at once in a round (each holds a PostgreSQL connection meanwhile). */
  readonly concurrency: number;
  /** Pause between rounds when nothing was due. */
  readonly idleMs: number;
  /** Release jobs this long before their due time (the worker holds them until due). */
  readonly preDispatchMs: number;
  readonly quantum: number;
  readonly tenantWeights: ReadonlyMap<string, number>;
  /** Called for every dispatched job (metrics, tests). */
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  /** Called for every job that expired instead of being dispatched. */
  readonly onExpired?: (record: HotRecord) => void;
  /** Redis refused a write for the partition (maxmemory): switch it to PostgreSQL-only. */
  readonly onOom: (partition: number) => void;
}

/**
 * Runs a claim transaction again when PostgreSQL reports a serialization failure (40001): a
 * reschedule that moved a row to another monthly partition while the claim waited for its lock.
 * Nothing was produced in the failed try (the produce happens after the claim).
 */
async function retryOnSerialization<T>(fn: () => Promise<T>, tries = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries || (err as { code?: string }).code !== '40001') throw err;
    }
  }
}

/**
 * The dispatch loop: for every owned partition, pops due jobs (on Redis time, epoch-checked,
 * fairly across tenants, per class within rate limits), claims them in PostgreSQL (only a job
 * still SCHEDULED at the popped version, only while the epoch is current), produces them to their
 * class's task topic and commits; then acknowledges them in Redis. A partition in PostgreSQL-only
 * mode dispatches straight from PostgreSQL. One loop, never overlapping itself.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  readonly #loop: PollLoop;
  /** Pops run one at a time (see #pop). */
  #popTurn: Promise<unknown> = Promise.resolve();

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#loop = new PollLoop({
      round: () => this.#round(),
      intervalMs: options.idleMs,
      onError: (err) => options.log.error({ err }, 'dispatch round failed'),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /** A job due now entered a hot set: dispatch without waiting out the idle pause. */
  wake(): void {
    this.#loop.wake();
  }

  /**
   * One pass over the dispatchable partitions, a few at a time: they are independent (own hot
   * set, own epoch), and one after another a job due in the last partition waited for every
   * other partition's PostgreSQL claim and Kafka produce. True when one had a full batch.
   */
  async #round(): Promise<boolean> {
    const queue = this.#o.ownership.dispatchable();
    let busy = false;
    const lane = async () => {
      for (let partition = queue.shift(); partition !== undefined; partition = queue.shift()) {
        try {
          if (await this.#dispatchPartition(partition)) busy = true;
        } catch (err) {
          // One partition's failure (Redis, Kafka, PostgreSQL) must not stall the others; its
          // popped jobs stay in flight and are reclaimed.
          this.#o.log.error({ err, partition }, 'dispatch failed for a partition; retrying next round');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#o.concurrency, queue.length) }, lane));
    return busy;
  }

  /** Returns true when the partition had a full batch (more may be due). */
  async #dispatchPartition(partition: number): Promise<boolean> {
    const epochP = this.#o.ownership.epoch(partition);
    if (!epochP) return false;
    const epoch = await epochP;
    try {
      if (this.#o.modes.isFallback(partition)) {
        const nowMs = await this.#o.hot.serverTimeMs();
        const { sent, expired } = await dispatchFromPostgres(
          this.#o,
          partition,
          epoch,
          nowMs,
          this.#o.preDispatchMs,
          this.#o.batchSize,
        );
        this.#report(sent, expired, nowMs);
        return sent.length + expired.length >= this.#o.batchSize;
      }
      return await this.#dispatchHot(partition, epoch);
    } catch (err) {
      if (isKairosError(err, 'STALE_EPOCH')) {
        // Not awaited: a rebuild of one partition must not pause dispatch for the others; the
        // partition is left out of the rounds until it is whole again.
        this.#o.ownership.onStale(partition, epoch).catch((e: unknown) => {
          this.#o.log.error(
            { err: e, partition },
            'recovering a stale partition failed; retrying on next stale',
          );
        });
        return false;
      }
      if (isKairosError(err, 'REDIS_OOM')) {
        this.#o.onOom(partition);
        return true;
      }
      throw err;
    }
  }

  /**
   * Takes rate-limit tokens, pops and gives back the unused tokens, one partition at a time (a
   * few Redis round trips): in parallel, the first partition to ask would take a small bucket
   * whole, and a partition with nothing of that class due would keep starving the others. The
   * slow part after it (PostgreSQL claim, Kafka produce) runs in parallel.
   */
  #pop(partition: number, epoch: number) {
    const turn = this.#popTurn.then(async () => {
      const plan = await this.#o.release.plan();
      const { nowMs, jobs } = await this.#o.hot.popDue(partition, epoch, {
        classes: plan.classes,
        leadMs: this.#o.preDispatchMs,
        quantum: this.#o.quantum,
        weights: this.#o.tenantWeights,
      });
      const records = jobs.map((j) => JSON.parse(j.record) as HotRecord);
      const perClass = new Map<string, number>();
      for (const r of records) perClass.set(r.resource_class, (perClass.get(r.resource_class) ?? 0) + 1);
      await this.#o.release.settle(plan, perClass);
      return { plan, nowMs, records, perClass };
    });
    this.#popTurn = turn.catch(() => undefined);
    return turn;
  }

  async #dispatchHot(partition: number, epoch: number): Promise<boolean> {
    const { plan, nowMs, records, perClass } = await this.#pop(partition, epoch);
    if (records.length === 0) return false;

    // Deadline passed by Redis time: the job is not worth running any more.
    const expired = records.filter((r) => r.deadline_at !== null && r.deadline_at < nowMs);
    const live = records.filter((r) => !expired.includes(r));
    await expireJobs(
      this.#o.pool,
      expired.map((r) => ({
        jobId: r.job_id,
        dueAt: new Date(r.due_at),
        deadlineAt: new Date(r.deadline_at ?? 0),
      })),
    );
    // Reported as soon as PostgreSQL has it: a later ack refused for a stale epoch must not
    // hide a dispatch that happened.
    this.#report([], expired, nowMs);
    // Each resource class on its own: a class whose topic is missing or failing keeps its jobs
    // in flight (reclaimed and retried) without holding back the other classes' jobs.
    const settled: HotRecord[] = [...expired];
    for (const [topic, group] of this.#o.messages.byTopic(live)) {
      const messages = await Promise.all(group.map((r) => this.#o.messages.build(r, epoch, nowMs)));
      try {
        const claimed = await retryOnSerialization(() =>
          inTransaction(this.#o.pool, async (tx) => {
            if (!(await holdPartitionEpoch(tx, partition, epoch))) {
              throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`);
            }
            const claimed = await claimJobsForDispatch(
              tx,
              group.map((r) => ({ jobId: r.job_id, dueAt: new Date(r.due_at), version: r.version })),
              new Date(nowMs),
            );
            // Runs of schedules: the overlap policy may skip, hold back or cancel before producing.
            const gated = await this.#o.gate.apply(tx, claimed, nowMs);
            await writeOutbox(tx, gated.events);
            const ids = new Set(claimed.flatMap((c) => (gated.withheld.has(c.id) ? [] : [c.id])));
            await recordDispatchedAttempts(
              tx,
              claimed.flatMap((c) =>
                ids.has(c.id) ? [{ jobId: c.id, fence: c.fence, attempt: c.attempt }] : [],
              ),
              epoch,
              new Date(nowMs),
            );
            const out = messages.filter((_, i) => ids.has(group[i]?.job_id ?? ''));
            if (out.length > 0) await this.#o.producer.send({ topic, acks: -1, messages: out });
            return ids;
          }),
        );
        // Unclaimed jobs were cancelled, rescheduled or dispatched meanwhile: dropped here.
        settled.push(...group);
        this.#report(
          group.filter((r) => claimed.has(r.job_id)),
          [],
          nowMs,
        );
      } catch (err) {
        if (isKairosError(err, 'STALE_EPOCH')) throw err;
        this.#o.log.error({ err, topic, jobs: group.length }, 'dispatch to a task topic failed; will retry');
      }
    }
    await this.#o.hot.ack(
      partition,
      epoch,
      settled.map((r) => ({ jobId: r.job_id, version: r.version })),
    );
    return plan.classes.some((c) => c.limit > 0 && (perClass.get(c.name) ?? 0) >= c.limit);
  }

  #report(sent: readonly HotRecord[], expired: readonly HotRecord[], nowMs: number): void {
    for (const r of expired) this.#o.onExpired?.(r);
    for (const r of sent) this.#o.onDispatched?.(r, nowMs);
  }
}
