import { expect, test } from 'vitest';
import { Leases, partitionKeys, type AttemptRef } from '@kairos/redis';
import { useNamespace } from '../support/namespace.js';

const attempt = (fence: number): AttemptRef => ({ jobId: 'job-1', shard: 2, fence, version: 1 });

/** Deletes every key of the namespace: what a Redis restart or FLUSHALL does to it. */
async function loseEverything(redis: ReturnType<Awaited<ReturnType<typeof useNamespace>>['redis']>) {
  const prefix = redis.options.keyPrefix ?? '';
  // KEYS takes its pattern as is (no prefix added) and returns full names; DEL adds the prefix.
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(prefix.length)));
}

test('a claimed attempt is renewed and released; a newer fence makes the older worker a zombie', async () => {
  const ns = await useNamespace('lease-scripts');
  const redis = ns.redis();
  const leases = new Leases(redis);
  expect(await leases.claim(attempt(1), 'w1', 10_000)).toBe('OK');
  expect(await leases.claim(attempt(1), 'w2', 10_000)).toBe('BUSY');
  expect(await leases.renew(attempt(1), 'w1', 10_000)).toBe('OK');
  // The job was dispatched again with fence 2 (the reaper took w1's lease): w1 is a zombie.
  expect(await leases.claim(attempt(2), 'w2', 10_000)).toBe('OK');
  expect(await leases.renew(attempt(1), 'w1', 10_000)).toBe('ZOMBIE');
  expect(await leases.release(attempt(1), 'w1', true)).toBe('ZOMBIE');
  expect(await leases.release(attempt(2), 'w2', true)).toBe('OK');
  expect(await leases.claim(attempt(2), 'w3', 10_000)).toBe('DONE');
  await redis.quit();
});

test('Redis losing its data does not make a running worker a zombie', async () => {
  const ns = await useNamespace('lease-scripts-loss');
  const redis = ns.redis();
  const leases = new Leases(redis);
  expect(await leases.claim(attempt(1), 'w1', 10_000)).toBe('OK');
  await loseEverything(redis);
  // Its heartbeat holds the attempt again (and the reaper sees its lease again)...
  expect(await leases.renew(attempt(1), 'w1', 10_000)).toBe('OK');
  expect(await redis.zscore(partitionKeys('', 2).leases, 'job-1')).not.toBeNull();
  await loseEverything(redis);
  // ... and its release after the result is recorded, not refused.
  expect(await leases.release(attempt(1), 'w1', true)).toBe('OK');
  expect(await leases.claim(attempt(1), 'w2', 10_000)).toBe('DONE');

  // A lost worker's older attempt re-created after the loss never outranks the newer one: the
  // newer fence takes the record over, and the older worker learns it is a zombie.
  expect(await leases.claim(attempt(3), 'w3', 10_000)).toBe('OK');
  await loseEverything(redis);
  expect(await leases.renew(attempt(2), 'w2', 10_000)).toBe('OK');
  expect(await leases.renew(attempt(3), 'w3', 10_000)).toBe('OK');
  expect(await leases.renew(attempt(2), 'w2', 10_000)).toBe('ZOMBIE');
  expect(await leases.release(attempt(3), 'w3', true)).toBe('OK');
  await redis.quit();
});

test('batched lease calls: one pipeline, one script call per partition, each attempt its own outcome', async () => {
  const ns = await useNamespace('lease-scripts-batch');
  const redis = ns.redis();
  const leases = new Leases(redis);
  const a = (jobId: string, shard: number, fence = 1): AttemptRef => ({ jobId, shard, fence, version: 1 });
  expect(await leases.claim(a('held', 1), 'w2', 10_000)).toBe('OK');
  const values = (settled: PromiseSettledResult<string>[]) =>
    settled.map((s) => (s.status === 'fulfilled' ? s.value : `error ${String(s.reason)}`));
  // Three attempts in partition 1 (one held by another worker), one in partition 4.
  const refs = [a('j1', 1), a('held', 1), a('j2', 4), a('j3', 1)];
  expect(values(await leases.claimMany(refs, 'w1', 10_000))).toEqual(['OK', 'BUSY', 'OK', 'OK']);
  expect(await redis.zcard(partitionKeys('', 1).leases)).toBe(3);
  // A newer attempt of j3 exists (its lease was reaped and it was dispatched again).
  expect(await leases.claim(a('j3', 1, 2), 'w3', 10_000)).toBe('OK');
  expect(values(await leases.renewMany(refs, 'w1', 10_000))).toEqual(['OK', 'ZOMBIE', 'OK', 'ZOMBIE']);
  const releases = [
    { attempt: a('j1', 1), done: true },
    { attempt: a('j2', 4), done: false },
    { attempt: a('j3', 1), done: true },
  ];
  expect(values(await leases.releaseMany(releases, 'w1'))).toEqual(['OK', 'OK', 'ZOMBIE']);
  expect(values(await leases.claimMany([a('j1', 1), a('j2', 4)], 'w4', 10_000))).toEqual(['DONE', 'OK']);
  expect(await leases.claimMany([], 'w1', 10_000)).toEqual([]);
  await redis.quit();
});
