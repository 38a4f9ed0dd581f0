import { expect, test } from 'vitest';
import { HotSet, Leases, partitionKeys, type ClaimRef } from '@kairos/redis';
import { useNamespace } from '../support/namespace.js';

type Redis = ReturnType<Awaited<ReturnType<typeof useNamespace>>['redis']>;

const attempt = (fence: number, epoch = 1): ClaimRef => ({
  jobId: 'job-1',
  shard: 2,
  fence,
  version: 1,
  epoch,
});

/** What the delay tier does when it takes a partition whose attempts Redis does not hold. */
async function restore(
  redis: Redis,
  epoch: number,
  shards: readonly number[],
  queued: { jobId: string; fence: number }[] = [],
) {
  const hot = new HotSet(redis);
  for (const shard of shards) {
    await redis.set(partitionKeys('', shard).epoch, epoch);
    await hot.restoreAttempts(shard, epoch, queued);
  }
}

/** Deletes every key of the namespace: what a Redis restart or FLUSHALL does to it. */
async function loseEverything(redis: Redis) {
  const prefix = redis.options.keyPrefix ?? '';
  // KEYS takes its pattern as is (no prefix added) and returns full names; DEL adds the prefix.
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(prefix.length)));
}

test('a claimed attempt is renewed and released; a newer fence makes the older worker a zombie', async () => {
  const ns = await useNamespace('lease-scripts');
  const redis = ns.redis();
  const leases = new Leases(redis);
  await restore(redis, 1, [2]);
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
  await restore(redis, 1, [2]);
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
  const a = (jobId: string, shard: number, fence = 1): ClaimRef => ({
    jobId,
    shard,
    fence,
    version: 1,
    epoch: 1,
  });
  await restore(redis, 1, [1, 4]);
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

test('after Redis lost a partition, a task it no longer knows waits for the restore, then runs only if it was still waiting', async () => {
  const ns = await useNamespace('lease-scripts-restore');
  const redis = ns.redis();
  const leases = new Leases(redis);
  await restore(redis, 1, [2]);
  const task = (jobId: string, fence: number, epoch: number): ClaimRef => ({
    jobId,
    shard: 2,
    fence,
    version: 1,
    epoch,
  });
  // Under epoch 1: 'done' finished, 'waiting' was dispatched and not claimed yet.
  expect(await leases.claim(task('done', 1, 1), 'w1', 10_000)).toBe('OK');
  expect(await leases.release(task('done', 1, 1), 'w1', true)).toBe('OK');
  await loseEverything(redis);
  // Nothing is known until the owner restored the partition: every claim waits, none runs.
  expect(await leases.claim(task('done', 1, 1), 'w2', 10_000)).toBe('WAIT');
  expect(await leases.claim(task('waiting', 1, 1), 'w2', 10_000)).toBe('WAIT');
  expect(await redis.exists(partitionKeys('', 2).attempt('done'))).toBe(0);
  // The owner takes epoch 2 and writes back what PostgreSQL holds as QUEUED: only 'waiting'.
  await restore(redis, 2, [2], [{ jobId: 'waiting', fence: 1 }]);
  expect(await leases.claim(task('done', 1, 1), 'w2', 10_000)).toBe('GONE');
  expect(await leases.claim(task('waiting', 1, 1), 'w2', 10_000)).toBe('OK');
  expect(await leases.claim(task('waiting', 1, 1), 'w3', 10_000)).toBe('BUSY');
  // A task of the new epoch is claimed as ever; a restore that comes again writes nothing.
  expect(await leases.claim(task('new', 1, 2), 'w2', 10_000)).toBe('OK');
  expect(await new HotSet(redis).restoreAttempts(2, 2, [{ jobId: 'done', fence: 1 }])).toBe(0);
  expect(await leases.claim(task('done', 1, 1), 'w2', 10_000)).toBe('GONE');
  await redis.quit();
});

test('a worker whose claim Redis lost keeps its attempt when the restore wrote it back as waiting', async () => {
  const ns = await useNamespace('lease-scripts-restore-held');
  const redis = ns.redis();
  const leases = new Leases(redis);
  await restore(redis, 1, [2]);
  expect(await leases.claim(attempt(1), 'w1', 10_000)).toBe('OK');
  await loseEverything(redis);
  // Its start had not reached PostgreSQL: the job was still QUEUED when the owner restored it.
  await restore(redis, 2, [2], [{ jobId: 'job-1', fence: 1 }]);
  expect(await leases.renew(attempt(1), 'w1', 10_000)).toBe('OK');
  expect(await leases.claim(attempt(1), 'w2', 10_000)).toBe('BUSY');
  expect(await leases.release(attempt(1), 'w1', true)).toBe('OK');
  expect(await leases.claim(attempt(1), 'w2', 10_000)).toBe('DONE');
  await redis.quit();
});
