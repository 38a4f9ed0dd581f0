import { KairosError } from '@kairos/core';
import type { Redis } from 'ioredis';
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

export interface PoppedJob {
  readonly jobId: string;
  readonly record: string;
}

function rethrowStale(err: unknown, partition: number, epoch: number): never {
  if (err instanceof Error && err.message.includes('STALE_EPOCH')) {
    throw new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`, {
      cause: err,
    });
  }
  throw err;
}

/**
 * The per-partition hot set in Redis. Every mutation runs as one Lua script that first checks the
 * caller's partition epoch; a stale owner gets a STALE_EPOCH KairosError and changes nothing.
 */
export class HotSet {
  readonly #redis: Redis & KairosScripts;
  readonly #prefix: string;
  readonly #ttl: number;
  readonly #reclaimAfterMs: number;

  constructor(redis: Redis, options: HotSetOptions = {}) {
    this.#redis = withScripts(redis);
    this.#prefix = options.keyPrefix ?? '';
    this.#ttl = options.versionTtlSeconds ?? 7 * 24 * 3600;
    this.#reclaimAfterMs = options.reclaimAfterMs ?? 30_000;
  }

  keys(partition: number): PartitionKeys {
    return partitionKeys(this.#prefix, partition);
  }

  /**
   * Records the owner's epoch (taken from PostgreSQL, which keeps it monotonic); never lowers it.
   * Returns false if a newer owner's epoch is already there.
   */
  async setEpoch(partition: number, epoch: number): Promise<boolean> {
    return (await this.#redis.kairosSetEpoch(this.keys(partition).epoch, epoch)) === 1;
  }

  /** The epoch Redis holds for a partition (undefined after Redis lost its data). */
  async currentEpoch(partition: number): Promise<number | undefined> {
    const v = await this.#redis.get(this.keys(partition).epoch);
    return v === null ? undefined : Number(v);
  }

  async schedule(
    partition: number,
    epoch: number,
    job: { jobId: string; dueAtMs: number; version: number; record: string },
  ): Promise<boolean> {
    const k = this.keys(partition);
    try {
      const r = await this.#redis.kairosSchedule(
        k.due,
        k.jobs,
        k.version(job.jobId),
        k.epoch,
        k.inflight,
        epoch,
        job.jobId,
        job.dueAtMs,
        job.version,
        job.record,
        this.#ttl,
      );
      return r === 1;
    } catch (err) {
      rethrowStale(err, partition, epoch);
    }
  }

  async cancel(partition: number, epoch: number, jobId: string, version: number): Promise<boolean> {
    const k = this.keys(partition);
    try {
      const r = await this.#redis.kairosCancel(
        k.due,
        k.jobs,
        k.inflight,
        k.version(jobId),
        k.epoch,
        epoch,
        jobId,
        version,
        this.#ttl,
      );
      return r === 1;
    } catch (err) {
      rethrowStale(err, partition, epoch);
    }
  }

  /** Pops up to `limit` jobs due by Redis time; returns that time too (the dispatch time). */
  async popDue(
    partition: number,
    epoch: number,
    limit: number,
  ): Promise<{ nowMs: number; jobs: PoppedJob[] }> {
    const k = this.keys(partition);
    let raw: (string | number)[];
    try {
      raw = await this.#redis.kairosPopDue(
        k.due,
        k.jobs,
        k.inflight,
        k.epoch,
        epoch,
        limit,
        this.#reclaimAfterMs,
      );
    } catch (err) {
      rethrowStale(err, partition, epoch);
    }
    const jobs: PoppedJob[] = [];
    for (let i = 1; i + 1 < raw.length; i += 2)
      jobs.push({ jobId: String(raw[i]), record: String(raw[i + 1]) });
    return { nowMs: Number(raw[0]), jobs };
  }

  /** Forgets dispatched jobs (Kafka acknowledged them); a newer version of a job is kept. */
  async ack(
    partition: number,
    epoch: number,
    jobs: readonly { jobId: string; version: number }[],
  ): Promise<number> {
    if (jobs.length === 0) return 0;
    const k = this.keys(partition);
    try {
      return await this.#redis.kairosAck(
        k.jobs,
        k.inflight,
        k.epoch,
        epoch,
        ...jobs.flatMap((j) => [j.jobId, j.version]),
      );
    } catch (err) {
      rethrowStale(err, partition, epoch);
    }
  }

  /** Jobs waiting in the hot set of a partition (for metrics and tests). */
  async size(partition: number): Promise<{ due: number; inflight: number }> {
    const k = this.keys(partition);
    const [due, inflight] = await Promise.all([this.#redis.zcard(k.due), this.#redis.zcard(k.inflight)]);
    return { due, inflight };
  }
}
