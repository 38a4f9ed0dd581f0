import { KairosError } from '@kairos/core';
import type { RedisClient } from './client.js';
import { typedOom, typedStaleEpoch } from './redis-errors.js';
import { partitionKeys, type PartitionKeys } from './keys.js';
import { withScripts, type KairosScripts } from './scripts.js';

export interface HotSetOptions {
  /** Prepended to every key (tests and several deployments on one Redis). Default: ''. */
  readonly keyPrefix?: string;
  /** How long a job's version marker lives; should cover the job-events retention. Default: 7 days. */
  readonly versionTtlSeconds?: number;
  /** Re-hand out a popped job whose dispatch was not acknowledged within this. Default: 30 s. */
  readonly reclaimAfterMs?: number;
}

export interface HotJob {
  readonly jobId: string;
  readonly dueAtMs: number;
  readonly version: number;
  readonly resourceClass: string;
  readonly tenant: string;
  /** The dispatch record (JSON); must hold `resource_class`, `tenant_id` and `version`. */
  readonly record: string;
}

export type ScheduleOutcome = 'added' | 'ignored' | 'deferred';

/** A job asked about by holds(): where its entries would be. */
export interface HeldJob {
  readonly jobId: string;
  readonly resourceClass: string;
  readonly tenant: string;
}

/** One job event for applyEvents: a job to schedule, or its cancellation at a version. */
export type HotEvent =
  | { readonly kind: 'schedule'; readonly job: HotJob }
  | { readonly kind: 'cancel'; readonly jobId: string; readonly version: number };

/** What an event did: a schedule's outcome, or a cancel that `removed` the job (or `ignored`: stale). */
export type EventOutcome = ScheduleOutcome | 'removed';

export interface ScheduleOptions {
  /** Jobs due later than Redis time + this stay out of the hot set. Default: unbounded. */
  readonly windowMs?: number;
  /** 'hydrate' re-adds a version seen before but absent (deferred, trimmed). Default: 'event'. */
  readonly mode?: 'event' | 'hydrate';
}

export interface PopOptions {
  /** Classes in release order (put `critical` first), each with the most jobs to pop now. */
  readonly classes: readonly { readonly name: string; readonly limit: number }[];
  /** Release jobs due up to this long ahead (pre-dispatch). Default: 0. */
  readonly leadMs?: number;
  /** Jobs per tenant per round-robin pass at weight 1. Default: 16. */
  readonly quantum?: number;
  /** Tenants considered per class per call. Default: 256. */
  readonly maxTenants?: number;
  /** Most reclaimed in-flight entries per call. Default: 500. */
  readonly maxReclaim?: number;
  /** Tenant weights (others weigh 1). */
  readonly weights?: ReadonlyMap<string, number>;
}

export interface PoppedJob {
  readonly jobId: string;
  readonly record: string;
}

export interface PopResult {
  /** Redis time of the pop, ms: the clock every due decision uses. */
  readonly nowMs: number;
  readonly jobs: PoppedJob[];
  /**
   * Per class asked for (same order): due time, ms, of its earliest job still waiting after the
   * pop; undefined when none waits. A class popped to its limit may have more due already.
   */
  readonly nextDueMs: readonly (number | undefined)[];
  /** When the oldest popped-but-unacknowledged job becomes reclaimable, ms; undefined if none. */
  readonly reclaimAtMs: number | undefined;
}

export interface HotStats {
  /** Jobs held (waiting and in flight). */
  readonly jobs: number;
  readonly inflight: number;
  /** Due time of the oldest waiting job, ms; undefined when none waits. */
  readonly oldestDueMs: number | undefined;
}

/** A script's refusal as the typed KairosError callers branch on (STALE_EPOCH, REDIS_OOM). */
function rethrow(err: unknown, partition: number, epoch: number): never {
  throw typedOom(typedStaleEpoch(err, partition, epoch), `a write for partition ${partition}`);
}

/** A score the scripts return, -1 meaning none. */
function score(v: string | number | undefined): number | undefined {
  const n = Number(v ?? -1);
  return n < 0 ? undefined : n;
}

/** pop-due.lua's reply: now, reclaim time, n, n next-due times, then id/record pairs. */
function parsePop(raw: readonly (string | number)[]): PopResult {
  const n = Number(raw[2] ?? 0);
  const nextDueMs = raw.slice(3, 3 + n).map(score);
  const jobs: PoppedJob[] = [];
  for (let i = 3 + n; i + 1 < raw.length; i += 2)
    jobs.push({ jobId: String(raw[i]), record: String(raw[i + 1]) });
  return { nowMs: Number(raw[0]), jobs, nextDueMs, reclaimAtMs: score(raw[1]) };
}

/** Attempt keys per restore-attempts call: a few ms of script each. */
const RESTORE_CHUNK = 500;

const SCHEDULE_OUTCOME: Record<number, ScheduleOutcome> = { 0: 'ignored', 1: 'added', 2: 'deferred' };

/**
 * The per-partition hot set in Redis. Every mutation runs as one Lua script that first checks the
 * caller's partition epoch; a stale owner gets a STALE_EPOCH KairosError and changes nothing; a
 * write refused at maxmemory is a REDIS_OOM KairosError and changes nothing either.
 */
export class HotSet {
  readonly #redis: RedisClient & KairosScripts;
  readonly #prefix: string;
  readonly #ttl: number;
  readonly #reclaimAfterMs: number;
  /** The client's own key prefix: ioredis adds it to KEYS, but not to the base passed in ARGV. */
  readonly #clientPrefix: string;

  constructor(redis: RedisClient, options: HotSetOptions = {}) {
    this.#redis = withScripts(redis);
    this.#prefix = options.keyPrefix ?? '';
    this.#clientPrefix = redis.options.keyPrefix ?? '';
    this.#ttl = options.versionTtlSeconds ?? 7 * 24 * 3600;
    this.#reclaimAfterMs = options.reclaimAfterMs ?? 30_000;
  }

  #base(k: PartitionKeys): string {
    return this.#clientPrefix + k.base;
  }

  keys(partition: number): PartitionKeys {
    return partitionKeys(this.#prefix, partition);
  }

  /** Redis server time, ms: the clock every due decision uses. */
  async serverTimeMs(): Promise<number> {
    return this.#redis.serverTime();
  }

  /**
   * Records the owner's epoch (taken from PostgreSQL, which keeps it monotonic); never lowers it.
   * Returns false if a newer owner's epoch is already there.
   */
  async setEpoch(partition: number, epoch: number): Promise<boolean> {
    try {
      return (await this.#redis.kairosSetEpoch(this.keys(partition).epoch, epoch)) === 1;
    } catch (err) {
      throw typedOom(err, `the epoch of partition ${partition}`);
    }
  }

  /** The epoch Redis holds for a partition (undefined after Redis lost its data). */
  async currentEpoch(partition: number): Promise<number | undefined> {
    const v = await this.#redis.get(this.keys(partition).epoch);
    return v === null ? undefined : Number(v);
  }

  /** Whether the partition's attempts were restored since Redis last lost them (restore-attempts.lua). */
  async restored(partition: number): Promise<boolean> {
    return (await this.#redis.exists(this.keys(partition).since)) === 1;
  }

  /**
   * After Redis lost the partition's state: writes back the attempts PostgreSQL holds as dispatched
   * and not started (those a worker may still claim), in chunks, then marks the partition restored
   * under `epoch` (the owner's new one). Until then workers' claims of attempts Redis does not know
   * wait; after, those of an older epoch are refused. Returns how many attempt keys were written.
   */
  async restoreAttempts(
    partition: number,
    epoch: number,
    attempts: readonly { jobId: string; fence: number }[],
  ): Promise<number> {
    const k = this.keys(partition);
    let written = 0;
    for (let i = 0; i === 0 || i < attempts.length; i += RESTORE_CHUNK) {
      const chunk = attempts.slice(i, i + RESTORE_CHUNK);
      const last = i + RESTORE_CHUNK >= attempts.length;
      try {
        const n = await this.#redis.kairosRestoreAttempts(
          2 + chunk.length,
          k.epoch,
          k.since,
          ...chunk.map((a) => k.attempt(a.jobId)),
          epoch,
          this.#ttl,
          last ? '1' : '0',
          ...chunk.map((a) => a.fence),
        );
        if (n < 0) return written;
        written += n;
      } catch (err) {
        rethrow(err, partition, epoch);
      }
    }
    return written;
  }

  /** Puts one job into the partition's hot set (see applyEvents). */
  async schedule(
    partition: number,
    epoch: number,
    job: HotJob,
    options: ScheduleOptions = {},
  ): Promise<ScheduleOutcome> {
    const [outcome] = await this.applyEvents(partition, epoch, [{ kind: 'schedule', job }], options);
    return outcome === 'added' || outcome === 'deferred' ? outcome : 'ignored';
  }

  /** Removes one job from the partition's hot set at a cancelling version; false if stale. */
  async cancel(partition: number, epoch: number, jobId: string, version: number): Promise<boolean> {
    const [outcome] = await this.applyEvents(partition, epoch, [{ kind: 'cancel', jobId, version }]);
    return outcome === 'removed';
  }

  /**
   * Applies job events of one partition in one round trip (apply-events.lua), all or nothing
   * under the epoch check: a schedule adds the job unless a newer version was seen or it is due
   * after the window (deferred); a cancel removes it and remembers its version. Outcomes come in
   * the events' order.
   */
  async applyEvents(
    partition: number,
    epoch: number,
    events: readonly HotEvent[],
    options: ScheduleOptions = {},
  ): Promise<EventOutcome[]> {
    if (events.length === 0) return [];
    const k = this.keys(partition);
    const idOf = (e: HotEvent) => (e.kind === 'schedule' ? e.job.jobId : e.jobId);
    const args = events.flatMap((e) =>
      e.kind === 'schedule'
        ? ['S', e.job.jobId, e.job.version, e.job.dueAtMs, e.job.record, e.job.resourceClass, e.job.tenant]
        : ['C', e.jobId, e.version, '', '', '', ''],
    );
    let replies: number[];
    try {
      replies = await this.#redis.kairosApplyEvents(
        4 + events.length,
        k.epoch,
        k.jobs,
        k.inflight,
        k.classes,
        ...events.map((e) => k.version(idOf(e))),
        epoch,
        this.#ttl,
        this.#base(k),
        options.windowMs ?? Number.MAX_SAFE_INTEGER,
        options.mode ?? 'event',
        ...args,
      );
    } catch (err) {
      rethrow(err, partition, epoch);
    }
    return events.map((e, i) => {
      const r = replies[i] ?? 0;
      if (e.kind === 'cancel') return r === 1 ? 'removed' : 'ignored';
      return SCHEDULE_OUTCOME[r] ?? 'ignored';
    });
  }

  /**
   * Pops due jobs by Redis time, fairly across tenants, per class; returns that time too, and the
   * partition's next deadlines (same round trip), so the caller can sleep until the next one.
   */
  async popDue(partition: number, epoch: number, options: PopOptions): Promise<PopResult> {
    const k = this.keys(partition);
    const weights = [...(options.weights ?? new Map<string, number>())];
    const bad = [
      ...(options.quantum !== undefined && !(Number.isInteger(options.quantum) && options.quantum >= 1)
        ? [{ field: 'quantum', message: 'must be an integer >= 1' }]
        : []),
      ...weights
        .filter(([, w]) => !(Number.isInteger(w) && w >= 1))
        .map(([t]) => ({ field: `weights.${t}`, message: 'must be an integer >= 1' })),
      ...options.classes
        .filter((c) => !(Number.isInteger(c.limit) && c.limit >= 0))
        .map((c) => ({ field: `classes.${c.name}.limit`, message: 'must be an integer >= 0' })),
    ];
    if (bad.length > 0) throw new KairosError('VALIDATION', 'invalid pop options', { fields: bad });
    let raw: (string | number)[];
    try {
      raw = await this.#redis.kairosPopDue(
        k.epoch,
        k.jobs,
        k.inflight,
        epoch,
        this.#base(k),
        options.leadMs ?? 0,
        this.#reclaimAfterMs,
        options.quantum ?? 16,
        options.maxTenants ?? 256,
        options.maxReclaim ?? 500,
        options.classes.length,
        ...options.classes.flatMap((c) => [c.name, c.limit]),
        weights.length,
        ...weights.flat(),
      );
    } catch (err) {
      rethrow(err, partition, epoch);
    }
    return parsePop(raw);
  }

  /**
   * Retires settled dispatches (sent, expired, or refused by the claim): each popped version
   * leaves every structure and is marked so no replayed event or stale hydration re-adds it; a
   * newer version of a job is kept. Returns how many were taken out of flight.
   */
  async ack(
    partition: number,
    epoch: number,
    jobs: readonly { jobId: string; version: number }[],
  ): Promise<number> {
    if (jobs.length === 0) return 0;
    const k = this.keys(partition);
    try {
      return await this.#redis.kairosAck(
        3 + jobs.length,
        k.jobs,
        k.inflight,
        k.epoch,
        ...jobs.map((j) => k.version(j.jobId)),
        epoch,
        this.#ttl,
        this.#base(k),
        ...jobs.flatMap((j) => [j.jobId, j.version]),
      );
    } catch (err) {
      rethrow(err, partition, epoch);
    }
  }

  /** Drops entries due after Redis time + windowMs, in bounded steps; returns how many. */
  async trim(partition: number, epoch: number, windowMs: number, step = 1000): Promise<number> {
    const k = this.keys(partition);
    let total = 0;
    try {
      for (;;) {
        const n = await this.#redis.kairosTrim(
          k.epoch,
          k.jobs,
          k.classes,
          epoch,
          this.#base(k),
          windowMs,
          step,
        );
        total += n;
        if (n < step) return total;
      }
    } catch (err) {
      rethrow(err, partition, epoch);
    }
  }

  /** Drops the partition's whole hot set (keeps its epoch); returns how many jobs it held. */
  async clear(partition: number, epoch: number): Promise<number> {
    const k = this.keys(partition);
    try {
      return await this.#redis.kairosClearPartition(
        k.epoch,
        k.jobs,
        k.inflight,
        k.classes,
        epoch,
        this.#base(k),
      );
    } catch (err) {
      rethrow(err, partition, epoch);
    }
  }

  async stats(partition: number): Promise<HotStats> {
    const k = this.keys(partition);
    const [jobs = 0, inflight = 0, oldest = -1] = await this.#redis.kairosHotStats(
      k.jobs,
      k.inflight,
      k.classes,
      this.#base(k),
    );
    return { jobs, inflight, oldestDueMs: oldest < 0 ? undefined : oldest };
  }

  /**
   * Per job, whether the partition's hot set holds it so that it will be dispatched: in flight,
   * or waiting with all three entries (its record, its place in its tenant's queue, its tenant in
   * the class's ready index). One pipelined read, no script, so it works while Redis refuses
   * writes (OOM). The reconciliation watchdog uses it to tell a job that is late from one no one
   * will dispatch (a partial loss may take any of the entries).
   */
  async holds(partition: number, jobs: readonly HeldJob[]): Promise<boolean[]> {
    if (jobs.length === 0) return [];
    const k = this.keys(partition);
    const pipeline = this.#redis.pipeline();
    for (const j of jobs) {
      pipeline
        .zscore(k.inflight, j.jobId)
        .hexists(k.jobs, j.jobId)
        .zscore(k.queue(j.resourceClass, j.tenant), j.jobId)
        .zscore(k.ready(j.resourceClass), j.tenant);
    }
    const replies = (await pipeline.exec()) ?? [];
    return jobs.map((_, i) => {
      const four = replies.slice(4 * i, 4 * i + 4);
      const err = four.find(([e]) => e)?.[0];
      if (err) throw err;
      const [inflight, inHash, queued, ready] = four.map(([, v]) => v);
      return (
        typeof inflight === 'string' ||
        (inHash === 1 && typeof queued === 'string' && typeof ready === 'string')
      );
    });
  }

  /** Jobs in the hot set of a partition: waiting (`due`) and in flight. */
  async size(partition: number): Promise<{ due: number; inflight: number }> {
    const s = await this.stats(partition);
    return { due: s.jobs - s.inflight, inflight: s.inflight };
  }
}
