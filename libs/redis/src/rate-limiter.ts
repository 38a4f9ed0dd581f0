import { KairosError, type FieldError } from '@kairos/core';
import type { RedisClient } from './client.js';
import { redisReplyCode } from './redis-errors.js';
import { withScripts, type KairosScripts } from './scripts.js';

export interface RateLimiterOptions {
  /** Prepended to every key (tests and several deployments on one Redis). Default: ''. */
  readonly keyPrefix?: string;
}

/** A token bucket: `ratePerSec` tokens refill per second, at most `burst` wait unused. */
export interface RateLimit {
  readonly ratePerSec: number;
  readonly burst: number;
}

export interface TakeResult {
  /** Tokens each class asked for got. */
  readonly granted: Map<string, number>;
  /** Per class asked for: ms until its bucket holds a whole token again (0: now, or unlimited). */
  readonly refillMs: Map<string, number>;
}

const CLASS_NAME = /^[a-z0-9][a-z0-9_-]*$/;

function invalid(message: string, fields: FieldError[]): never {
  throw new KairosError('VALIDATION', message, { fields });
}

function checkClass(resourceClass: string, field = 'resourceClass'): void {
  if (typeof resourceClass !== 'string' || !CLASS_NAME.test(resourceClass)) {
    invalid(`invalid resource class "${String(resourceClass)}"`, [
      { field, message: `must match ${String(CLASS_NAME)}` },
    ]);
  }
}

/** Classes and counts as the scripts' ARGV pairs; counts must be non-negative integers. */
function checkCounts(counts: ReadonlyMap<string, number>, what: string): void {
  for (const [resourceClass, n] of counts) {
    checkClass(resourceClass, `${what}.${resourceClass}`);
    if (!Number.isSafeInteger(n) || n < 0) {
      invalid(`${what} for "${resourceClass}" must be an integer >= 0, got ${n}`, [
        { field: `${what}.${resourceClass}`, message: 'must be an integer >= 0' },
      ]);
    }
  }
}

function parseLimit(resourceClass: string, raw: string): RateLimit {
  const [rate, burst, ...rest] = raw.split(' ');
  const ratePerSec = Number(rate);
  const b = Number(burst);
  if (
    rest.length > 0 ||
    !(Number.isFinite(ratePerSec) && ratePerSec > 0) ||
    !Number.isSafeInteger(b) ||
    b < 1
  ) {
    throw new KairosError('CONFIG', `malformed rate limit for resource class "${resourceClass}": "${raw}"`);
  }
  return { ratePerSec, burst: b };
}

function rethrowBadLimit(err: unknown): never {
  if (redisReplyCode(err) === 'BAD_RATE_LIMIT') {
    // The script's reply is `BAD_RATE_LIMIT <class>`.
    const resourceClass = (err as Error).message.split('BAD_RATE_LIMIT ')[1] ?? '?';
    throw new KairosError('CONFIG', `malformed rate limit for resource class "${resourceClass}"`, {
      cause: err,
    });
  }
  throw err;
}

/**
 * Per-resource-class token buckets in Redis, for the delay tier's dispatcher: it takes tokens
 * before dispatching a class's jobs and refunds what it did not use. Limits and buckets live in
 * Redis, so every delay-tier instance shares them and an operator can change them at run time;
 * refill runs on Redis TIME, so instances' clocks do not matter. All keys carry the hash tag
 * `{kairos-rate}`: one Cluster slot, so each script touches one slot.
 *
 * When take() fails (Redis OOM refused the write, a network error) treat it as granting nothing:
 * the script records all of its grants or none, and a grant lost in transit only costs tokens.
 */
export class RateLimiter {
  readonly #redis: RedisClient & KairosScripts;
  readonly #base: string;

  constructor(redis: RedisClient, options: RateLimiterOptions = {}) {
    this.#redis = withScripts(redis);
    this.#base = `${options.keyPrefix ?? ''}kairos:{kairos-rate}`;
  }

  /** The HASH of limits: resource class -> "ratePerSec burst". */
  get limitsKey(): string {
    return `${this.#base}:limits`;
  }

  /** A class's bucket: "tokens last_refill_ms", absent when full. */
  bucketKey(resourceClass: string): string {
    return `${this.#base}:bucket:${resourceClass}`;
  }

  /**
   * Limits a class (or changes its limit); the next take() of any instance applies it. Tokens
   * already in the bucket carry over, capped at the new burst.
   */
  async setLimit(resourceClass: string, limit: RateLimit): Promise<void> {
    checkClass(resourceClass);
    const fields: FieldError[] = [];
    const { ratePerSec, burst } = limit;
    if (typeof ratePerSec !== 'number' || !Number.isFinite(ratePerSec) || ratePerSec <= 0) {
      fields.push({ field: 'ratePerSec', message: 'must be a finite number > 0' });
    }
    if (typeof burst !== 'number' || !Number.isSafeInteger(burst) || burst < 1) {
      fields.push({ field: 'burst', message: 'must be an integer >= 1' });
    }
    if (fields.length > 0) invalid(`invalid rate limit for resource class "${resourceClass}"`, fields);
    await this.#redis.hset(this.limitsKey, resourceClass, `${ratePerSec} ${burst}`);
  }

  /**
   * Makes a class unlimited again and drops its bucket (should it be limited later, it starts
   * full). Returns false if it had no limit.
   */
  async clearLimit(resourceClass: string): Promise<boolean> {
    checkClass(resourceClass);
    const r = await this.#redis
      .multi()
      .hdel(this.limitsKey, resourceClass)
      .del(this.bucketKey(resourceClass))
      .exec();
    const failed = r?.find(([err]) => err !== null)?.[0];
    if (failed) throw failed;
    return r?.[0]?.[1] === 1;
  }

  /** Every class's limit; a class not listed is unlimited. */
  async limits(): Promise<Record<string, RateLimit>> {
    const raw = await this.#redis.hgetall(this.limitsKey);
    const out: Record<string, RateLimit> = {};
    for (const [resourceClass, value] of Object.entries(raw))
      out[resourceClass] = parseLimit(resourceClass, value);
    return out;
  }

  /**
   * Takes up to `wanted` tokens per class, atomically across classes; returns how many each got
   * (every class asked for is in the result). An unlimited class gets all it wants.
   */
  async take(wanted: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    return (await this.takeTokens(wanted)).granted;
  }

  /**
   * As take(), and for every class asked for, how many ms until its bucket holds a whole token
   * again (0: it does, or the class is unlimited): a dispatcher held back by a limit sleeps that
   * long instead of polling. A class asked for 0 tokens is not looked at (wait 0).
   */
  async takeTokens(wanted: ReadonlyMap<string, number>): Promise<TakeResult> {
    checkCounts(wanted, 'wanted');
    const granted = new Map<string, number>();
    const refillMs = new Map<string, number>();
    const asked = [...wanted].filter(([resourceClass, n]) => {
      granted.set(resourceClass, 0);
      refillMs.set(resourceClass, 0);
      return n > 0;
    });
    if (asked.length === 0) return { granted, refillMs };
    let counts: number[];
    try {
      counts = await this.#redis.kairosRateTake(
        1 + asked.length,
        this.limitsKey,
        ...asked.map(([resourceClass]) => this.bucketKey(resourceClass)),
        ...asked.flat(),
      );
    } catch (err) {
      rethrowBadLimit(err);
    }
    asked.forEach(([resourceClass], i) => {
      granted.set(resourceClass, Number(counts[i] ?? 0));
      refillMs.set(resourceClass, Number(counts[asked.length + i] ?? 0));
    });
    return { granted, refillMs };
  }

  /** Gives back tokens taken but not used; a bucket never exceeds its burst. */
  async refund(unused: ReadonlyMap<string, number>): Promise<void> {
    checkCounts(unused, 'unused');
    const given = [...unused].filter(([, n]) => n > 0);
    if (given.length === 0) return;
    await this.#redis.kairosRateRefund(
      1 + given.length,
      this.limitsKey,
      ...given.map(([resourceClass]) => this.bucketKey(resourceClass)),
      ...given.flat(),
    );
  }
}
