import type { RedisClient } from './client.js';
import { Cluster } from 'ioredis';
import { partitionKeys, type PartitionKeys } from './keys.js';
import { memoryUse } from './memory.js';
import { typedOom, typedStaleEpoch } from './redis-errors.js';
import { kairosPipeline, withScripts, type KairosScripts } from './scripts.js';

export interface LeasesOptions {
  /** Prepended to every key; must match the delay tier's. Default: ''. */
  readonly keyPrefix?: string;
  /** How long the record of a job's latest attempt is kept. Default: 7 days. */
  readonly attemptTtlSeconds?: number;
}

/** An attempt as dispatched: where it lives (shard), which one (fence) of which version. */
export interface AttemptRef {
  readonly jobId: string;
  readonly shard: number;
  readonly fence: number;
  readonly version: number;
}

/** An attempt as a worker claims it: also the epoch of the partition owner that dispatched it. */
export interface ClaimRef extends AttemptRef {
  readonly epoch: number;
}

export interface ReapResult {
  readonly reaped: { jobId: string; fence: number; workerId: string }[];
  /** Redis time of the reap, ms. */
  readonly nowMs: number;
  /** Earliest lease expiry left in the partition, ms; undefined when none runs. */
  readonly nextExpiryMs: number | undefined;
}

/** What Redis knows of a running attempt (see Leases.attemptStates). */
export interface AttemptState {
  readonly state: 'held' | 'finished' | 'lost';
  readonly workerId: string | undefined;
}

export type ClaimOutcome = 'OK' | 'CANCELLED' | 'STALE' | 'DONE' | 'BUSY' | 'GONE' | 'WAIT';
export type RenewOutcome = 'OK' | 'CANCELLED' | 'ZOMBIE';
export type ReleaseOutcome = 'OK' | 'ZOMBIE';

/** One attempt's end on its worker: `done` once its result is durable, else given up unfinished. */
export interface AttemptRelease {
  readonly attempt: AttemptRef;
  readonly done: boolean;
}

/** numberOfKeys, then KEYS, then ARGV of a script with a variable number of keys. */
type ScriptArgs = [number, ...(string | number)[]];

/** The outcome of a single-item call: its value, or its error thrown. */
function one<R>(settled: readonly PromiseSettledResult<R>[]): R {
  const [s] = settled;
  if (s?.status === 'fulfilled') return s.value;
  throw s?.reason ?? new Error('no outcome from Redis');
}

/**
 * Leases of running attempts, in the hot set's partition slot: a worker claims an attempt before
 * running it and renews the lease by heartbeat; the partition owner reaps expired leases and
 * dispatches those jobs again with a higher fence. All on Redis TIME.
 */
export class Leases {
  readonly #redis: RedisClient & KairosScripts;
  readonly #prefix: string;
  readonly #clientPrefix: string;
  readonly #ttl: number;

  constructor(redis: RedisClient, options: LeasesOptions = {}) {
    this.#redis = withScripts(redis);
    this.#prefix = options.keyPrefix ?? '';
    this.#clientPrefix = redis.options.keyPrefix ?? '';
    this.#ttl = options.attemptTtlSeconds ?? 7 * 24 * 3600;
  }

  /**
   * Per attempt, what Redis knows of it (one pipelined read): `held` (its lease runs), `finished`
   * (its worker marked it done or released it, or the reaper took it: its result is on its way or
   * already handled), or `lost` (no lease and no sign of an end: Redis lost the lease with its
   * keys). With the worker named in its attempt key, if any. The watchdog's test for RUNNING jobs.
   */
  async attemptStates(partition: number, attempts: readonly AttemptRef[]): Promise<AttemptState[]> {
    if (attempts.length === 0) return [];
    const k = partitionKeys(this.#prefix, partition);
    const pipeline = this.#redis.pipeline();
    for (const a of attempts) pipeline.zscore(k.leases, a.jobId).get(k.attempt(a.jobId));
    const replies = (await pipeline.exec()) ?? [];
    return attempts.map((a, i) => {
      const [leaseErr, lease] = replies[2 * i] ?? [];
      const [keyErr, key] = replies[2 * i + 1] ?? [];
      const err = leaseErr ?? keyErr;
      if (err) throw err;
      const m = typeof key === 'string' ? /^(\d+)\|([A-Z]+)\|(.*)$/.exec(key) : null;
      const workerId = m?.[3];
      if (typeof lease === 'string') return { state: 'held', workerId };
      // QUEUED: restored after a loss, not claimed since (see restore-attempts.lua).
      const ended = m !== null && Number(m[1]) >= a.fence && m[2] !== 'RUNNING' && m[2] !== 'QUEUED';
      return { state: ended ? 'finished' : 'lost', workerId };
    });
  }

  /**
   * Whether Redis is at its maxmemory (it refuses writes: workers then run attempts unleased); on a
   * cluster, whether any master is.
   */
  async full(): Promise<boolean> {
    return (await memoryUse(this.#redis)) >= 1;
  }

  async claim(a: ClaimRef, workerId: string, leaseMs: number): Promise<ClaimOutcome> {
    return one(await this.claimMany([a], workerId, leaseMs));
  }

  async renew(a: AttemptRef, workerId: string, leaseMs: number): Promise<RenewOutcome> {
    return one(await this.renewMany([a], workerId, leaseMs));
  }

  /** Ends the attempt here: `done` once its result is durable, else given up for another worker. */
  async release(a: AttemptRef, workerId: string, done: boolean): Promise<ReleaseOutcome> {
    return one(await this.releaseMany([{ attempt: a, done }], workerId));
  }

  /**
   * Claims attempts before they run, in one pipeline of one script call per partition. Each
   * outcome settles on its own (a partition refused for memory rejects with REDIS_OOM); the
   * promise rejects only when Redis could not be reached at all.
   */
  claimMany(
    attempts: readonly ClaimRef[],
    workerId: string,
    leaseMs: number,
  ): Promise<PromiseSettledResult<ClaimOutcome>[]> {
    return this.#perPartition(
      attempts,
      (a) => a,
      'kairosLeaseClaim',
      (k, group) => [
        2 + 2 * group.length,
        k.leases,
        k.since,
        ...group.flatMap((a) => [k.attempt(a.jobId), k.version(a.jobId)]),
        workerId,
        leaseMs,
        this.#ttl,
        ...group.flatMap((a) => [a.jobId, a.fence, a.version, a.epoch]),
      ],
    );
  }

  /** Renews running attempts' leases (a heartbeat of all of them), as claimMany does. */
  renewMany(
    attempts: readonly AttemptRef[],
    workerId: string,
    leaseMs: number,
  ): Promise<PromiseSettledResult<RenewOutcome>[]> {
    return this.#perPartition(
      attempts,
      (a) => a,
      'kairosLeaseRenew',
      (k, group) => [
        1 + 2 * group.length,
        k.leases,
        ...group.flatMap((a) => [k.attempt(a.jobId), k.version(a.jobId)]),
        workerId,
        leaseMs,
        this.#ttl,
        ...group.flatMap((a) => [a.jobId, a.fence, a.version]),
      ],
    );
  }

  /** Ends attempts on this worker (see release), as claimMany does. */
  releaseMany(
    releases: readonly AttemptRelease[],
    workerId: string,
  ): Promise<PromiseSettledResult<ReleaseOutcome>[]> {
    return this.#perPartition(
      releases,
      (r) => r.attempt,
      'kairosLeaseRelease',
      (k, group) => [
        1 + group.length,
        k.leases,
        ...group.map((r) => k.attempt(r.attempt.jobId)),
        workerId,
        this.#ttl,
        ...group.flatMap((r) => [r.attempt.jobId, r.attempt.fence, r.done ? 'DONE' : 'RELEASED']),
      ],
    );
  }

  /**
   * Runs a lease script once per partition of `items` (a script touches one partition's slot), all
   * in one pipeline, and hands each item its own outcome, in the order given. On a Redis Cluster the
   * partitions live on different nodes and ioredis refuses a pipeline that spans them: there the
   * calls go out concurrently instead, one per partition.
   */
  async #perPartition<T, R>(
    items: readonly T[],
    attemptOf: (item: T) => AttemptRef,
    script: 'kairosLeaseClaim' | 'kairosLeaseRenew' | 'kairosLeaseRelease',
    args: (keys: PartitionKeys, group: T[]) => ScriptArgs,
  ): Promise<PromiseSettledResult<R>[]> {
    if (items.length === 0) return [];
    const byShard = new Map<number, number[]>();
    items.forEach((item, i) => {
      const shard = attemptOf(item).shard;
      byShard.set(shard, [...(byShard.get(shard) ?? []), i]);
    });
    const calls = [...byShard].map(([shard, indexes]) =>
      args(
        partitionKeys(this.#prefix, shard),
        indexes.map((i) => items[i] as T),
      ),
    );
    const replies = await this.#run(script, calls);
    const out: PromiseSettledResult<R>[] = [];
    [...byShard.entries()].forEach(([shard, indexes], g) => {
      const [err, reply] = replies[g] ?? [new Error('no reply from Redis'), null];
      indexes.forEach((i, j) => {
        out[i] = err
          ? { status: 'rejected', reason: typedOom(err, `the leases of partition ${shard}`) }
          : { status: 'fulfilled', value: (reply as R[])[j] as R };
      });
    });
    return out;
  }

  /** Each call's [error, reply]: one pipeline on one server, concurrent calls on a cluster. */
  async #run(
    script: 'kairosLeaseClaim' | 'kairosLeaseRenew' | 'kairosLeaseRelease',
    calls: readonly ScriptArgs[],
  ): Promise<(readonly [Error | null, unknown])[]> {
    if (this.#redis instanceof Cluster) {
      const redis = this.#redis;
      return Promise.all(
        calls.map((c) =>
          redis[script](...c).then(
            (reply) => [null, reply] as const,
            (err: unknown) => [err instanceof Error ? err : new Error(String(err)), null] as const,
          ),
        ),
      );
    }
    const pipeline = kairosPipeline(this.#redis);
    for (const c of calls) pipeline[script](...c);
    return (await pipeline.exec()) ?? [];
  }

  /**
   * The partition owner takes expired leases (epoch-checked); returns the reaped attempts and
   * the next expiry. They are handed out again after `reportAgainMs` until forget() drops them.
   */
  async reap(partition: number, epoch: number, limit: number, reportAgainMs = 10_000): Promise<ReapResult> {
    const k = partitionKeys(this.#prefix, partition);
    let raw: (string | number)[];
    try {
      raw = await this.#redis.kairosLeaseReap(
        k.epoch,
        k.leases,
        k.since,
        epoch,
        this.#clientPrefix + k.base,
        limit,
        this.#ttl,
        reportAgainMs,
      );
    } catch (err) {
      throw typedStaleEpoch(err, partition, epoch);
    }
    const reaped: ReapResult['reaped'] = [];
    for (let i = 2; i + 2 < raw.length; i += 3)
      reaped.push({ jobId: String(raw[i]), fence: Number(raw[i + 1]), workerId: String(raw[i + 2]) });
    const next = Number(raw[1] ?? -1);
    return { reaped, nowMs: Number(raw[0]), nextExpiryMs: next < 0 ? undefined : next };
  }

  /** Drops reaped attempts once reported (a newer attempt's lease is kept). */
  async forget(partition: number, reaped: readonly { jobId: string; fence: number }[]): Promise<number> {
    if (reaped.length === 0) return 0;
    const k = partitionKeys(this.#prefix, partition);
    return this.#redis.kairosLeaseForget(
      k.leases,
      this.#clientPrefix + k.base,
      ...reaped.flatMap((r) => [r.jobId, r.fence]),
    );
  }

  /** Running attempts of a partition (metrics, tests). */
  async running(partition: number): Promise<number> {
    return this.#redis.zcard(partitionKeys(this.#prefix, partition).leases);
  }
}
