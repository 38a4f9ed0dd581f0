import { KairosError } from '@kairos/core';
import type { Redis } from 'ioredis';
import { partitionKeys } from './keys.js';
import { rethrowOom } from './redis-errors.js';
import { withScripts, type KairosScripts } from './scripts.js';

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

  async claim(a: AttemptRef, workerId: string, leaseMs: number): Promise<ClaimOutcome> {
    try {
      return (await this.#redis.kairosLeaseClaim(
        ...this.#leaseArgs(a, workerId, leaseMs),
        this.#ttl,
      )) as ClaimOutcome;
    } catch (err) {
      rethrowOom(err, `the lease of job ${a.jobId}`);
    }
  }

  async renew(a: AttemptRef, workerId: string, leaseMs: number): Promise<RenewOutcome> {
    return (await this.#redis.kairosLeaseRenew(
      ...this.#leaseArgs(a, workerId, leaseMs),
      this.#ttl,
    )) as RenewOutcome;
  }

  /** KEYS and ARGV shared by the claim and renew scripts (see their headers). */
  #leaseArgs(a: AttemptRef, workerId: string, leaseMs: number) {
    const k = partitionKeys(this.#prefix, a.shard);
    return [
      k.attempt(a.jobId),
      k.leases,
      k.version(a.jobId),
      a.jobId,
      a.fence,
      a.version,
      workerId,
      leaseMs,
    ] as const;
  }

  /** Ends the attempt here: `done` once its result is durable, else given up for another worker. */
  async release(a: AttemptRef, workerId: string, done: boolean): Promise<'OK' | 'ZOMBIE'> {
    const k = partitionKeys(this.#prefix, a.shard);
    return (await this.#redis.kairosLeaseRelease(
      k.attempt(a.jobId),
      k.leases,
      a.jobId,
      a.fence,
      workerId,
      done ? 'DONE' : 'RELEASED',
      this.#ttl,
    )) as 'OK' | 'ZOMBIE';
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
      if (err instanceof Error && err.message.includes('STALE_EPOCH')) {
        throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`, {
          cause: err,
        });
      }
      throw err;
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
