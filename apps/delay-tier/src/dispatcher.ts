import { LifecycleService, PollLoop, type RoundOutcome } from '@kairos/core';
import type { Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { Producer } from 'kafkajs';
import { nextDeadline, PartitionDeadlines } from './deadlines.js';
import type { Ownership } from './ownership.js';
import type { OwnershipGuard } from './ownership-guard.js';
import type { PartitionModes } from './partition-modes.js';
import { dispatchFromPostgres } from './pg-dispatch.js';
import type { OccurrenceGate } from './occurrence-gate.js';
import type { HotRecord } from './record.js';
import type { Release } from './release.js';
import { dispatchRound, type PoppedPartition, type RoundDispatchDeps } from './round-dispatch.js';
import type { TaskMessages } from './task-messages.js';

export interface DispatcherOptions {
  /** Its lifecycle's and log lines' name (a lane of dispatchLanes()). Default: 'dispatcher'. */
  readonly name?: string;
  /** The classes it releases from hot sets. Default: every class. */
  readonly classes?: ReadonlySet<string>;
  /**
   * Whether it dispatches PostgreSQL-only partitions (every class, straight from PostgreSQL).
   * Default: true. Of several dispatchers over the same partitions, exactly one must.
   */
  readonly postgresOnly?: boolean;
  /**
   * Classes another lane releases whose earliest waiting job this one's pops report too (popping
   * none of them), to `onDue`: that lane then needs no frequent safety-net visits of its own.
   */
  readonly peek?: {
    readonly classes: readonly string[];
    readonly onDue: (partition: number, dueAtMs: number) => void;
  };
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
  /** PostgreSQL-only partitions dispatched at once in a round (each holds a connection meanwhile). */
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
  /** Called with the runs of schedules the overlap gate skipped (committed), per schedule. */
  readonly onSkipped?: (skipped: ReadonlyMap<string, number>) => void;
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
  readonly #claims: RoundDispatchDeps;
  readonly #loop: PollLoop;
  readonly #deadlines: PartitionDeadlines;
  /** Pops run one at a time (see #pop). */
  #popTurn: Promise<unknown> = Promise.resolve();
  /** Per partition, popped jobs whose dispatch failed: still in flight under `epoch`, retried next. */
  readonly #unsent = new Map<number, { readonly epoch: number; readonly records: readonly HotRecord[] }>();

  constructor(options: DispatcherOptions) {
    super(options.name ?? 'dispatcher');
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
    this.#unsent.delete(partition);
  }

  /**
   * One pass over the dispatchable partitions whose deadline came. Hot partitions are popped, then
   * dispatched together (dispatchRound: one claim transaction per task topic for all of them,
   * rather than one partition after another); PostgreSQL-only partitions each on their own. Again
   * at once when one had a full batch, else a sleep until the earliest deadline.
   */
  async #round(): Promise<RoundOutcome> {
    const dispatchable = this.#o.ownership.dispatchable();
    const due = this.#deadlines.due(dispatchable, SLACK_MS);
    for (const partition of due) this.#deadlines.visiting(partition);
    const next = new Map<number, number>();
    const fallback = due.filter((p) => this.#o.modes.isFallback(p));
    const hot = due.filter((p) => !fallback.includes(p));
    // Not ours to dispatch: back when the mode changes (refresh()), else at the safety net.
    if (this.#o.postgresOnly === false) for (const p of fallback) next.set(p, Infinity);
    await Promise.all([
      this.#hotRound(hot, next),
      this.#fallbackRound(this.#o.postgresOnly === false ? [] : fallback, next),
    ]);
    let busy = false;
    for (const [partition, at] of next) {
      this.#deadlines.plan(partition, at);
      if (at <= this.#deadlines.now()) busy = true;
    }
    return busy ? true : this.#deadlines.pauseMs(dispatchable);
  }

  /**
   * Pops each hot partition (or takes back what its last dispatch failed to send), then
   * dispatches what they gave in one go; notes each next visit.
   */
  async #hotRound(partitions: readonly number[], next: Map<number, number>): Promise<void> {
    const popped: PoppedPartition[] = [];
    await Promise.all(
      partitions.map(async (partition) => {
        const at = await this.#guarded(partition, async (epoch) => {
          const pop = await this.#popOrRetry(partition, epoch);
          if (pop.records.length > 0) popped.push({ partition, epoch, ...pop });
          return pop.nextAt;
        });
        next.set(partition, at);
      }),
    );
    if (popped.length === 0) return;
    const retryAt = this.#deadlines.now() + RETRY_MS;
    try {
      const { outcome, unsent } = await dispatchRound(this.#claims, popped);
      for (const p of popped) {
        const records = unsent.get(p.partition);
        if (records) this.#retryLater(p, records, next, retryAt);
        if (outcome.get(p.partition) !== 'stale') continue;
        // Stale: left out of the rounds until recovered (refresh() on ready).
        this.#o.guard.stale(p.partition, p.epoch);
        next.set(p.partition, Infinity);
      }
    } catch (err) {
      // Redis, Kafka or PostgreSQL failing: the popped jobs stay in flight, tried again shortly.
      this.#o.log.error(
        { err, partitions: popped.map((p) => p.partition) },
        'dispatch failed; retrying shortly',
      );
      for (const p of popped) this.#retryLater(p, p.records, next, retryAt);
    }
  }

  /**
   * Popped jobs whose claim or produce failed (Kafka or PostgreSQL down) stay in flight in Redis;
   * they are dispatched again at `at` rather than after the in-flight reclaim time (30 s), the net
   * for a dispatcher that died. Until they go, the partition pops nothing new, so a long outage
   * holds one round's jobs, not a growing pile.
   */
  #retryLater(p: PoppedPartition, records: readonly HotRecord[], next: Map<number, number>, at: number) {
    this.#unsent.set(p.partition, { epoch: p.epoch, records });
    next.set(p.partition, at);
  }

  /** The partition's unsent jobs again (under the same epoch, at Redis time now), else a pop. */
  async #popOrRetry(
    partition: number,
    epoch: number,
  ): Promise<{ nowMs: number; records: readonly HotRecord[]; nextAt: number }> {
    const unsent = this.#unsent.get(partition);
    this.#unsent.delete(partition);
    if (unsent?.epoch !== epoch) return this.#pop(partition, epoch);
    const nowMs = await this.#o.hot.serverTimeMs();
    // Sent, the partition pops again at once.
    return { nowMs, records: unsent.records, nextAt: -Infinity };
  }

  /** PostgreSQL-only partitions, `concurrency` at a time (each holds a connection meanwhile). */
  async #fallbackRound(partitions: readonly number[], next: Map<number, number>): Promise<void> {
    const queue = [...partitions];
    const lane = async () => {
      for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
        const partition = p;
        next.set(
          partition,
          await this.#guarded(partition, (epoch) => this.#dispatchPostgres(partition, epoch)),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#o.concurrency, queue.length) }, lane));
  }

  /**
   * Runs `act` for the partition under its current epoch through the ownership guard and returns
   * the local time of its next visit: stale, left out of the rounds until recovered (refresh() on
   * ready); out of Redis memory, again at once, PostgreSQL-only; any other failure, again shortly,
   * without stalling the other partitions.
   */
  async #guarded(partition: number, act: (epoch: number) => Promise<number>): Promise<number> {
    const epochP = this.#o.ownership.epoch(partition);
    if (!epochP) return Infinity;
    const epoch = await epochP;
    try {
      const r = await this.#o.guard.run(partition, epoch, () => act(epoch));
      if (r.outcome === 'stale') return Infinity;
      return r.outcome === 'oom' ? -Infinity : r.value;
    } catch (err) {
      this.#o.log.error({ err, partition }, 'dispatch failed for a partition; retrying shortly');
      return this.#deadlines.now() + RETRY_MS;
    }
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
   * Takes rate-limit tokens, pops and gives back the unused tokens. With a class rate-limited,
   * one partition at a time (a few Redis round trips): in parallel, the first partition to ask
   * would take a small bucket whole, and a partition with nothing of that class due would keep
   * starving the others. With none limited there is nothing to share out: the pops of a round go
   * out together (one pipelined write).
   */
  #pop(partition: number, epoch: number): Promise<{ nowMs: number; records: HotRecord[]; nextAt: number }> {
    if (!this.#o.release.limited(this.#o.classes)) return this.#popNow(partition, epoch);
    const turn = this.#popTurn.then(() => this.#popNow(partition, epoch));
    this.#popTurn = turn.catch(() => undefined);
    return turn;
  }

  async #popNow(
    partition: number,
    epoch: number,
  ): Promise<{ nowMs: number; records: HotRecord[]; nextAt: number }> {
    const plan = await this.#o.release.plan(this.#o.classes);
    const peeked = (this.#o.peek?.classes ?? []).map((name) => ({ name, limit: 0 }));
    const popped = await this.#o.hot.popDue(partition, epoch, {
      classes: [...plan.classes, ...peeked],
      leadMs: this.#o.preDispatchMs,
      quantum: this.#o.quantum,
      weights: this.#o.tenantWeights,
    });
    this.#deadlines.sync(popped.nowMs);
    for (const due of popped.nextDueMs.slice(plan.classes.length))
      if (due !== undefined) this.#o.peek?.onDue(partition, due);
    const nextAt = this.#deadlines.toLocal(nextDeadline(popped, plan, this.#o.preDispatchMs));
    const records = popped.jobs.map((j) => JSON.parse(j.record) as HotRecord);
    const perClass = new Map<string, number>();
    for (const r of records) perClass.set(r.resource_class, (perClass.get(r.resource_class) ?? 0) + 1);
    await this.#o.release.settle(plan, perClass);
    // A class popped to its limit may have more due at once.
    const full = plan.classes.some((c) => c.limit > 0 && (perClass.get(c.name) ?? 0) >= c.limit);
    return { nowMs: popped.nowMs, records, nextAt: full ? -Infinity : nextAt };
  }

  #report(sent: readonly HotRecord[], expired: readonly HotRecord[], nowMs: number): void {
    for (const r of expired) this.#o.onExpired?.(r);
    for (const r of sent) this.#o.onDispatched?.(r, nowMs);
  }
}
