import type { Redis } from 'ioredis';
import { partitionKeys, type PartitionKeys } from './keys.js';
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

export interface ReapResult {
  readonly reaped: { jobId: string; fence: number; workerId: string }[];
  /** Redis time of the reap, ms. */
  readonly nowMs: number;
  /** Earliest lease expiry left in the partition, ms; undefined when none runs. */
  readonly nextExpiryMs: number | undefined;
}

export type ClaimOutcome = 'OK' | 'CANCELLED' | 'STALE' | 'DONE' | 'BUSY';
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
  readonly #redis: Redis & KairosScripts;
  readonly #prefix: string;
  readonly #clientPrefix: string;
  readonly #ttl: number;

  constructor(redis: Redis, options: LeasesOptions = {}) {
    this.#redis = withScripts(redis);
    this.#prefix = options.keyPrefix ?? '';
    this.#clientPrefix = redis.options.keyPrefix ?? '';
    this.#ttl = options.attemptTtlSeconds ?? 7 * 24 * 3600;
  }

  /**
   * Per job id, whether a running attempt of it holds a lease in the partition (one pipelined
   * read): the watchdog's test for RUNNING jobs whose lease Redis lost.
   */
  async held(partition: number, jobIds: readonly string[]): Promise<boolean[]> {
    if (jobIds.length === 0) return [];
    const leases = partitionKeys(this.#prefix, partition).leases;
    const pipeline = this.#redis.pipeline();
    for (const id of jobIds) pipeline.zscore(leases, id);
    const replies = (await pipeline.exec()) ?? [];
    return jobIds.map((_, i) => {
      const [err, score] = replies[i] ?? [];
      if (err) throw err;
      return typeof score === 'string';
    });
  }

  async claim(a: AttemptRef, workerId: string, leaseMs: number): Promise<ClaimOutcome> {
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
    attempts: readonly AttemptRef[],
    workerId: string,
    leaseMs: number,
  ): Promise<PromiseSettledResult<ClaimOutcome>[]> {
    return this.#leased('kairosLeaseClaim', attempts, workerId, leaseMs);
  }

  /** Renews running attempts' leases (a heartbeat of all of them), as claimMany does. */
  renewMany(
    attempts: readonly AttemptRef[],
    workerId: string,
    leaseMs: number,
  ): Promise<PromiseSettledResult<RenewOutcome>[]> {
    return this.#leased('kairosLeaseRenew', attempts, workerId, leaseMs);
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

  /** The claim or renew script on attempts, with the KEYS and ARGV they share (see their headers). */
  #leased<R>(
    script: 'kairosLeaseClaim' | 'kairosLeaseRenew',
    attempts: readonly AttemptRef[],
    workerId: string,
    leaseMs: number,
  ): Promise<PromiseSettledResult<R>[]> {
    return this.#perPartition(
      attempts,
      (a) => a,
      script,
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

  /**
   * Runs a lease script once per partition of `items` (a script touches one partition's slot), all
   * in one pipeline, and hands each item its own outcome, in the order given.
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
    const pipeline = kairosPipeline(this.#redis);
    for (const [shard, indexes] of byShard) {
      pipeline[script](
        ...args(
          partitionKeys(this.#prefix, shard),
          indexes.map((i) => items[i] as T),
        ),
      );
    }
    const replies = (await pipeline.exec()) ?? [];
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
