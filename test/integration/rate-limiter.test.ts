import { expect, test } from 'vitest';
import { isKairosError } from '@kairos/core';
import { RateLimiter, withScripts } from '@kairos/redis';
import type { Redis } from 'ioredis';
import { useNamespace } from '../support/namespace.js';

/** The Redis server clock, the one buckets refill on. */
const redisNow = (redis: Redis) => withScripts(redis).serverTime();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the Redis clock has moved at least `ms` past `since` (bounded). */
async function waitRedisMs(redis: Redis, since: number, ms: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await redisNow(redis)) - since < ms) {
    if (Date.now() > deadline) throw new Error(`the Redis clock did not move ${ms} ms in 10 s`);
    await sleep(10);
  }
}

/** Awaits a call that must fail with a KairosError of `code`. */
async function expectKairos(call: Promise<unknown>, code: 'VALIDATION' | 'CONFIG'): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKairosError(err), `expected a KairosError, got ${String(err)}`).toBe(true);
  expect(isKairosError(err) ? err.code : undefined).toBe(code);
}

const ask = (entries: Record<string, number>) => new Map(Object.entries(entries));
const asRecord = (m: Map<string, number>) => Object.fromEntries(m);

/** So slow that no token refills during a test: 1 per 100 s. */
const SLOW = 0.01;

test('an unlimited class gets everything it asks for and leaves no bucket behind', async () => {
  const ns = await useNamespace('rate-unlimited');
  const redis = ns.redis();
  const limiter = new RateLimiter(redis);
  // Every key is in the {kairos-rate} slot.
  for (const key of [limiter.limitsKey, limiter.bucketKey('gpu')])
    expect(key).toMatch(/^[^{}]*\{kairos-rate\}/);

  expect(await limiter.limits()).toEqual({});
  for (let i = 0; i < 3; i++) {
    expect(asRecord(await limiter.take(ask({ gpu: 1000, cpu: 1 })))).toEqual({ gpu: 1000, cpu: 1 });
  }
  expect(asRecord(await limiter.take(ask({ gpu: 0 })))).toEqual({ gpu: 0 });
  expect(asRecord(await limiter.take(new Map()))).toEqual({});
  await limiter.refund(ask({ gpu: 5 }));
  expect(await redis.exists(limiter.bucketKey('gpu'), limiter.bucketKey('cpu'))).toBe(0);
  await redis.quit();
});

test('50/s burst 10: 10 at once, then refills at the rate on the Redis clock', async () => {
  const ns = await useNamespace('rate-refill');
  const redis = ns.redis();
  const limiter = new RateLimiter(redis);
  const rate = 50;
  const burst = 10;
  await limiter.setLimit('email', { ratePerSec: rate, burst });

  const t0 = await redisNow(redis);
  let total = (await limiter.take(ask({ email: 100 }))).get('email') ?? -1;
  expect(total).toBe(burst);
  // Drained: what the next take gets is only what refilled since, far below a burst.
  const right = (await limiter.take(ask({ email: 100 }))).get('email') ?? -1;
  const t1 = await redisNow(redis);
  expect(right).toBeLessThanOrEqual(Math.floor(((t1 - t0) * rate) / 1000));
  total += right;

  // Keep asking for ~1 s of Redis time.
  let t = t1;
  while (t - t0 < 1000) {
    await sleep(20);
    total += (await limiter.take(ask({ email: 100 }))).get('email') ?? -1;
    t = await redisNow(redis);
  }
  const elapsedSec = (t - t0) / 1000;
  expect(total).toBeGreaterThanOrEqual(rate * elapsedSec * 0.5);
  expect(total).toBeLessThanOrEqual(rate * elapsedSec + burst);

  // The bucket expires long after it would be full again: 2x refill time, at least 60 s.
  const pttl = await redis.pttl(limiter.bucketKey('email'));
  expect(pttl).toBeGreaterThan(50_000);
  expect(pttl).toBeLessThanOrEqual(60_000);
  await redis.quit();
});

test('refunds give unused tokens back but never fill a bucket above its burst', async () => {
  const ns = await useNamespace('rate-refund');
  const redis = ns.redis();
  const limiter = new RateLimiter(redis);
  await limiter.setLimit('sms', { ratePerSec: SLOW, burst: 5 });

  // A full bucket (no key yet) stays at its burst.
  await limiter.refund(ask({ sms: 3 }));
  expect(await redis.exists(limiter.bucketKey('sms'))).toBe(0);
  expect((await limiter.take(ask({ sms: 100 }))).get('sms')).toBe(5);
  // TTL: twice the refill time from empty (2 * 5 / 0.01 s).
  const pttl = await redis.pttl(limiter.bucketKey('sms'));
  expect(pttl).toBeGreaterThan(990_000);
  expect(pttl).toBeLessThanOrEqual(1_000_000);

  await limiter.refund(ask({ sms: 2 }));
  expect((await limiter.take(ask({ sms: 100 }))).get('sms')).toBe(2);
  await limiter.refund(ask({ sms: 100 }));
  expect((await limiter.take(ask({ sms: 100 }))).get('sms')).toBe(5);
  expect((await limiter.take(ask({ sms: 1 }))).get('sms')).toBe(0);
  // A refund of nothing, or to an unlimited class, changes nothing.
  await limiter.refund(ask({ sms: 0, other: 7 }));
  expect(asRecord(await limiter.take(ask({ sms: 1, other: 3 })))).toEqual({ sms: 0, other: 3 });
  await redis.quit();
});

test('limits live in Redis: changed at run time by one instance, the next take of another applies them', async () => {
  const ns = await useNamespace('rate-runtime');
  const adminRedis = ns.redis();
  const dispatcherRedis = ns.redis();
  const admin = new RateLimiter(adminRedis);
  const dispatcher = new RateLimiter(dispatcherRedis);

  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(100);

  await admin.setLimit('batch', { ratePerSec: SLOW, burst: 3 });
  expect(await dispatcher.limits()).toEqual({ batch: { ratePerSec: SLOW, burst: 3 } });
  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(3);
  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(0);

  // Faster, with a bigger burst: the drained bucket refills at the new rate up to the new burst.
  await admin.setLimit('batch', { ratePerSec: 1000, burst: 20 });
  expect(await dispatcher.limits()).toEqual({ batch: { ratePerSec: 1000, burst: 20 } });
  await waitRedisMs(dispatcherRedis, await redisNow(dispatcherRedis), 50);
  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(20);

  // A smaller burst caps the tokens already there.
  await waitRedisMs(dispatcherRedis, await redisNow(dispatcherRedis), 50);
  await admin.setLimit('batch', { ratePerSec: 1000, burst: 4 });
  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(4);

  // Cleared: unlimited again, and its bucket is gone.
  expect(await admin.clearLimit('batch')).toBe(true);
  expect(await admin.clearLimit('batch')).toBe(false);
  expect(await dispatcherRedis.exists(admin.bucketKey('batch'))).toBe(0);
  expect(await dispatcher.limits()).toEqual({});
  expect((await dispatcher.take(ask({ batch: 100 }))).get('batch')).toBe(100);

  // Another deployment (key prefix) on the same Redis sees none of this one's limits.
  await admin.setLimit('batch', { ratePerSec: SLOW, burst: 1 });
  const other = new RateLimiter(dispatcherRedis, { keyPrefix: 'other.' });
  expect(await other.limits()).toEqual({});
  expect((await other.take(ask({ batch: 100 }))).get('batch')).toBe(100);
  await adminRedis.quit();
  await dispatcherRedis.quit();
});

test('invalid limits and counts get VALIDATION and change nothing; a malformed stored limit gets CONFIG and takes nothing', async () => {
  const ns = await useNamespace('rate-invalid');
  const redis = ns.redis();
  const limiter = new RateLimiter(redis);
  await limiter.setLimit('ok', { ratePerSec: 2.5, burst: 2 });
  const before = await redis.hgetall(limiter.limitsKey);

  const badLimits = [
    { ratePerSec: 0, burst: 1 },
    { ratePerSec: -1, burst: 1 },
    { ratePerSec: Number.NaN, burst: 1 },
    { ratePerSec: Number.POSITIVE_INFINITY, burst: 1 },
    { ratePerSec: 1, burst: 0 },
    { ratePerSec: 1, burst: -3 },
    { ratePerSec: 1, burst: 1.5 },
    { ratePerSec: 1, burst: Number.POSITIVE_INFINITY },
    { ratePerSec: '5', burst: 1 } as unknown as { ratePerSec: number; burst: number },
  ];
  for (const limit of badLimits) {
    await expectKairos(limiter.setLimit('ok', limit), 'VALIDATION');
    await expectKairos(limiter.setLimit('new', limit), 'VALIDATION');
  }
  for (const name of ['', 'Upper', '-dash', '_under', 'a b', 'a:b', 'a{b}', 'é']) {
    await expectKairos(limiter.setLimit(name, { ratePerSec: 1, burst: 1 }), 'VALIDATION');
    await expectKairos(limiter.clearLimit(name), 'VALIDATION');
    await expectKairos(limiter.take(ask({ [name]: 1 })), 'VALIDATION');
  }
  for (const n of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    await expectKairos(limiter.take(ask({ ok: n })), 'VALIDATION');
    await expectKairos(limiter.refund(ask({ ok: n })), 'VALIDATION');
  }
  expect(await redis.hgetall(limiter.limitsKey)).toEqual(before);
  expect(await limiter.limits()).toEqual({ ok: { ratePerSec: 2.5, burst: 2 } });
  expect(await redis.exists(limiter.bucketKey('ok'))).toBe(0);

  // A hand-written bad limit fails the whole take loudly, before any class's tokens are taken.
  await redis.hset(limiter.limitsKey, 'broken', 'fast 10');
  await expectKairos(limiter.take(ask({ ok: 1, broken: 1 })), 'CONFIG');
  await expectKairos(limiter.limits(), 'CONFIG');
  expect(await redis.exists(limiter.bucketKey('ok'))).toBe(0);
  await limiter.clearLimit('broken');
  expect(asRecord(await limiter.take(ask({ ok: 5 })))).toEqual({ ok: 2 });
  await redis.quit();
});

test('several classes in one take are independent', async () => {
  const ns = await useNamespace('rate-classes');
  const redis = ns.redis();
  const limiter = new RateLimiter(redis);
  await limiter.setLimit('a', { ratePerSec: SLOW, burst: 2 });
  await limiter.setLimit('b', { ratePerSec: SLOW, burst: 5 });
  expect(await limiter.limits()).toEqual({
    a: { ratePerSec: SLOW, burst: 2 },
    b: { ratePerSec: SLOW, burst: 5 },
  });

  expect(asRecord(await limiter.take(ask({ a: 10, b: 3, c: 7 })))).toEqual({ a: 2, b: 3, c: 7 });
  // 'a' drained does not hold back 'b'; a class asked for 0 is in the answer too.
  expect(asRecord(await limiter.take(ask({ a: 1, b: 10, c: 0 })))).toEqual({ a: 0, b: 2, c: 0 });
  await limiter.refund(ask({ a: 1 }));
  expect(asRecord(await limiter.take(ask({ b: 1, a: 5 })))).toEqual({ b: 0, a: 1 });
  // Changing one class's limit leaves the other's bucket alone.
  await limiter.setLimit('b', { ratePerSec: SLOW, burst: 50 });
  await limiter.clearLimit('a');
  expect(asRecord(await limiter.take(ask({ a: 9, b: 1 })))).toEqual({ a: 9, b: 0 });
  await redis.quit();
});
