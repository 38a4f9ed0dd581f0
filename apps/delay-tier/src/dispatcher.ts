import {
  isKairosError,
  LifecycleService,
  PollLoop,
  retryOnSerialization,
  type RoundOutcome,
} from '@kairos/core';
import { claimJobsAsOwner, forgetDispatchedAttempts, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Message, Producer } from 'kafkajs';
import {
  claimAndProduce,
  expireRecords,
  pastDeadline,
  type ClaimProduceDeps,
  type ClaimStep,
} from './claim-produce.js';
import { nextDeadline, PartitionDeadlines } from './deadlines.js';
import type { Ownership } from './ownership.js';
import type { OwnershipGuard } from './ownership-guard.js';
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
  /** STALE_EPOCH and REDIS_OOM policy of every partition's dispatch. */
  readonly guard: OwnershipGuard;
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
export class Dispatcher extends LifecycleService {
  readonly #o: DispatcherOptions;
  readonly #claims: ClaimProduceDeps;
  readonly #loop: PollLoop;
  readonly #deadlines: PartitionDeadlines;
  /** Pops run one at a time (see #pop). */
  #popTurn: Promise<unknown> = Promise.resolve();

  constructor(options: DispatcherOptions) {
    super('dispatcher');
    this.#o = options;
    this.#deadlines = new PartitionDeadlines(options.maxSleepMs);
    this.#claims = { ...options, report: (sent, expired, nowMs) => this.#report(sent, expired, nowMs) };
    this.#loop = new PollLoop({
      round: () => this.#round(),
      intervalMs: options.maxSleepMs,
      onError: (err) => options.log.error({ err }, 'dispatch round failed'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
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
    const r = await this.#o.guard.run(partition, epoch, () =>
      this.#o.modes.isFallback(partition)
        ? this.#dispatchPostgres(partition, epoch)
        : this.#dispatchHot(partition, epoch),
    );
    // Stale: left out of the rounds until recovered (refresh() on ready). OOM: again at once, PostgreSQL-only.
    if (r.outcome === 'stale') return Infinity;
    return r.outcome === 'oom' ? -Infinity : r.value;
  }

  /** PostgreSQL-only mode: no hot set to compute a deadline from, so it polls. */
  async #dispatchPostgres(partition: number, epoch: number): Promise<number> {
    const nowMs = await this.#o.hot.serverTimeMs();
    const { sent, expired } = await dispatchFromPostgres(
      this.#claims,
      partition,
      epoch,
      nowMs,
      this.#o.preDispatchMs,
      this.#o.batchSize,
    );
    if (sent.length + expired.length >= this.#o.batchSize) return -Infinity;
    return this.#deadlines.now() + this.#o.fallbackPollMs;
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
    const expired = pastDeadline(records, nowMs);
    const live = records.filter((r) => !expired.includes(r));
    await expireRecords(this.#o.pool, expired);
    // Reported as soon as PostgreSQL has it: a later ack refused for a stale epoch must not
    // hide a dispatch that happened.
    this.#report([], expired, nowMs);
    // Each resource class on its own: a class whose topic is missing or failing keeps its jobs
    // in flight (reclaimed and retried) without holding back the other classes' jobs.
    const settled: HotRecord[] = [...expired];
    for (const [topic, group] of this.#o.messages.byTopic(live)) {
      // Encoded before the transaction: no encoding while the claimed rows are locked.
      const messages = new Map(
        await Promise.all(
          group.map(async (r) => [r.job_id, await this.#o.messages.build(r, epoch, nowMs)] as const),
        ),
      );
      try {
        await retryOnSerialization(() =>
          claimAndProduce(
            this.#claims,
            partition,
            epoch,
            nowMs,
            poppedClaim(partition, epoch, nowMs, group, messages),
          ),
        );
        // Unclaimed jobs were cancelled, rescheduled or dispatched meanwhile: dropped here.
        settled.push(...group);
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

/**
 * The hot set's claim: only a popped job still SCHEDULED at its popped version is claimed, and
 * only while `epoch` still owns the partition (checked in the same statement); each claimed
 * attempt's row is written with it, and forgotten again for a run the overlap gate withholds.
 */
function poppedClaim(
  partition: number,
  epoch: number,
  nowMs: number,
  records: readonly HotRecord[],
  messages: ReadonlyMap<string, Message>,
): ClaimStep {
  return {
    claim: async (tx) => {
      const claimed = await claimJobsAsOwner(
        tx,
        partition,
        epoch,
        records.map((r) => ({ jobId: r.job_id, dueAt: new Date(r.due_at), version: r.version })),
        new Date(nowMs),
      );
      return claimed && { claimed, records, expired: [] };
    },
    messages,
    beforeProduce: (tx, _claim, withheld) => forgetDispatchedAttempts(tx, withheld),
  };
}
