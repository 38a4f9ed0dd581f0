import { isKairosError, KairosError, PollLoop, retryOnSerialization, type RoundOutcome } from '@kairos/core';
import {
  claimJobsAsOwner,
  expireJobs,
  inTransaction,
  forgetDispatchedAttempts,
  writeOutbox,
  type Pool,
} from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Producer } from 'kafkajs';
import { nextDeadline, PartitionDeadlines } from './deadlines.js';
import type { Ownership } from './ownership.js';
import type { PartitionModes } from './partition-modes.js';
import { dispatchFromPostgres } from './pg-dispatch.js';
import type { OccurrenceGate } from './occurrence-gate.js';
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
  /**
   * Longest a partition goes without a visit, ms: the safety net should a wake be missed (a
   * rate limit changed by another instance, Redis losing its data while nothing happens).
   */
  readonly maxSleepMs: number;
  /** How often a PostgreSQL-only partition is polled, ms (no hot set to compute a deadline from). */
  readonly fallbackPollMs: number;
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

/** Partitions whose deadline is this close are visited in the same round (saves a wake-up). */
const SLACK_MS = 2;
/** A partition whose dispatch failed (Redis, Kafka, PostgreSQL down) is tried again after this. */
const RETRY_MS = 100;

/**
 * The dispatch loop: for every owned partition, pops due jobs (on Redis time, epoch-checked,
 * fairly across tenants, per class within rate limits), claims them in PostgreSQL (only a job
 * still SCHEDULED at the popped version, only while the epoch is current), produces them to their
 * class's task topic and commits; then acknowledges them in Redis. A partition in PostgreSQL-only
 * mode dispatches straight from PostgreSQL. One loop, never overlapping itself.
 *
 * No fixed poll: each pop also returns the partition's next deadline (its earliest waiting job
 * per class, a rate limit's refill, the in-flight reclaim time), and the loop sleeps until the
 * earliest one over the partitions, visiting only the partitions whose time has come. Events
 * shorten a sleep: a job scheduled due before its partition's planned visit (scheduled()), a
 * partition's state changing (refresh()). Waking early is harmless (the pop decides on Redis
 * TIME), so deadlines are converted to local time erring late only by a reply's transit.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  readonly #loop: PollLoop;
  readonly #deadlines: PartitionDeadlines;
  /** Pops run one at a time (see #pop). */
  #popTurn: Promise<unknown> = Promise.resolve();

  constructor(options: DispatcherOptions) {
    this.#o = options;
    this.#deadlines = new PartitionDeadlines(options.maxSleepMs);
    this.#loop = new PollLoop({
      round: () => this.#round(),
      intervalMs: options.maxSleepMs,
      onError: (err) => options.log.error({ err }, 'dispatch round failed'),
    });
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
  }

  /**
   * A job due at `dueAtMs` (Redis time) entered the partition's hot set: if that is before the
   * partition's planned visit, wake for it then (not only when it is due now).
   */
  scheduled(partition: number, dueAtMs: number): void {
    const at = this.#deadlines.toLocal(dueAtMs - this.#o.preDispatchMs);
    if (this.#deadlines.hint(partition, at)) this.#loop.wakeIn(at - this.#deadlines.now());
  }

  /**
   * The partition's hot set or mode changed (new owner, rebuilt, jobs pre-loaded, PostgreSQL-only
   * mode entered or left), or with no partition every one's (a rate limit changed): visit now.
   */
  refresh(partition?: number): void {
    for (const p of partition === undefined ? this.#o.ownership.owned() : [partition])
      this.#deadlines.refresh(p);
    this.#loop.wake();
  }

  /** The partition is not ours any more. */
  forget(partition: number): void {
    this.#deadlines.forget(partition);
  }

  /**
   * One pass over the dispatchable partitions whose deadline came, a few at a time: they are
   * independent (own hot set, own epoch), and one after another a job due in the last partition
   * waited for every other partition's PostgreSQL claim and Kafka produce. Again at once when one
   * had a full batch, else a sleep until the earliest deadline.
   */
  async #round(): Promise<RoundOutcome> {
    const dispatchable = this.#o.ownership.dispatchable();
    const queue = this.#deadlines.due(dispatchable, SLACK_MS);
    let busy = false;
    const lane = async () => {
      for (let partition = queue.shift(); partition !== undefined; partition = queue.shift()) {
        this.#deadlines.visiting(partition);
        let next: number;
        try {
          next = await this.#dispatchPartition(partition);
        } catch (err) {
          // One partition's failure (Redis, Kafka, PostgreSQL) must not stall the others; its
          // popped jobs stay in flight and are reclaimed.
          this.#o.log.error({ err, partition }, 'dispatch failed for a partition; retrying shortly');
          next = this.#deadlines.now() + RETRY_MS;
        }
        this.#deadlines.plan(partition, next);
        if (next <= this.#deadlines.now()) busy = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#o.concurrency, queue.length) }, lane));
    return busy ? true : this.#deadlines.pauseMs(dispatchable);
  }

  /**
   * Dispatches what is due in the partition; returns the local time of its next visit (-Infinity
   * when it had a full batch: more may be due).
   */
  async #dispatchPartition(partition: number): Promise<number> {
    const epochP = this.#o.ownership.epoch(partition);
    if (!epochP) return Infinity;
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
        if (sent.length + expired.length >= this.#o.batchSize) return -Infinity;
        return this.#deadlines.now() + this.#o.fallbackPollMs;
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
        return Infinity;
      }
      if (isKairosError(err, 'REDIS_OOM')) {
        this.#o.onOom(partition);
        return -Infinity;
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
      const popped = await this.#o.hot.popDue(partition, epoch, {
        classes: plan.classes,
        leadMs: this.#o.preDispatchMs,
        quantum: this.#o.quantum,
        weights: this.#o.tenantWeights,
      });
      this.#deadlines.sync(popped.nowMs);
      const nextAt = this.#deadlines.toLocal(nextDeadline(popped, plan, this.#o.preDispatchMs));
      const records = popped.jobs.map((j) => JSON.parse(j.record) as HotRecord);
      const perClass = new Map<string, number>();
      for (const r of records) perClass.set(r.resource_class, (perClass.get(r.resource_class) ?? 0) + 1);
      await this.#o.release.settle(plan, perClass);
      // A class popped to its limit may have more due at once.
      const full = plan.classes.some((c) => c.limit > 0 && (perClass.get(c.name) ?? 0) >= c.limit);
      return { nowMs: popped.nowMs, records, nextAt: full ? -Infinity : nextAt };
    });
    this.#popTurn = turn.catch(() => undefined);
    return turn;
  }

  /** Returns the local time of the partition's next visit (-Infinity: go again at once). */
  async #dispatchHot(partition: number, epoch: number): Promise<number> {
    const { nowMs, records, nextAt } = await this.#pop(partition, epoch);
    if (records.length === 0) return nextAt;

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
            const claimed = await claimJobsAsOwner(
              tx,
              partition,
              epoch,
              group.map((r) => ({ jobId: r.job_id, dueAt: new Date(r.due_at), version: r.version })),
              new Date(nowMs),
            );
            if (!claimed) {
              throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`);
            }
            // Runs of schedules: the overlap policy may skip, hold back or cancel before producing.
            const gated = await this.#o.gate.apply(tx, claimed, nowMs);
            await writeOutbox(tx, gated.events);
            const ids = new Set(claimed.flatMap((c) => (gated.withheld.has(c.id) ? [] : [c.id])));
            await forgetDispatchedAttempts(
              tx,
              claimed.filter((c) => !ids.has(c.id)),
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
    return nextAt;
  }

  #report(sent: readonly HotRecord[], expired: readonly HotRecord[], nowMs: number): void {
    for (const r of expired) this.#o.onExpired?.(r);
    for (const r of sent) this.#o.onDispatched?.(r, nowMs);
  }
}
