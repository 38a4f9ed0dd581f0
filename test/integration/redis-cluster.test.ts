import { afterAll, beforeAll, expect, test } from 'vitest';
import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '@kairos/ops';
import {
  createRedis,
  HotSet,
  Leases,
  memoryUse,
  partitionKeys,
  RateLimiter,
  type HotJob,
  type RedisClient,
} from '@kairos/redis';

/**
 * Kairos' Redis layer on a real Redis Cluster (three masters made by `redis-cli --cluster create`):
 * every script and pipeline of the hot set, the leases and the rate limits, for partitions spread
 * over every master, through the client createRedis builds from several seed URLs. Redis refuses
 * a script whose keys cross slots (CROSSSLOT) or live on another node, and ioredis a pipeline that
 * spans nodes, so these calls succeeding is the check.
 */

const PARTITIONS = 16;
const PREFIX = 'cluster-test.';
let cluster: RedisCluster;
let redis: RedisClient;

beforeAll(async () => {
  cluster = await startRedisCluster({ masters: 3, args: ['--maxmemory', '64mb'] });
  redis = createRedis(cluster.url);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

const partitions = Array.from({ length: PARTITIONS }, (_, p) => p);
const job = (p: number, i: number, dueAtMs: number): HotJob => {
  const jobId = `j-${p}-${i}`;
  return {
    jobId,
    dueAtMs,
    version: 1,
    resourceClass: i % 2 === 0 ? 'critical' : 'default',
    tenant: `t${i % 3}`,
    record: JSON.stringify({
      job_id: jobId,
      resource_class: i % 2 === 0 ? 'critical' : 'default',
      tenant_id: `t${i % 3}`,
      version: 1,
    }),
  };
};

test('createRedis gives a cluster client for several seeds, and the partitions land on every master', async () => {
  expect(redis).toBeInstanceOf(Cluster);
  const owners = new Set<string>();
  const probe = cluster.client();
  try {
    const slots = await probe.cluster('SLOTS');
    for (const p of partitions) {
      const slot = Number(await probe.cluster('KEYSLOT', partitionKeys(PREFIX, p).epoch));
      const range = slots.find(([from, to]) => slot >= from && slot <= to);
      owners.add(String(range?.[2]?.[1]));
    }
  } finally {
    probe.disconnect();
  }
  expect(owners.size).toBe(3);
});

test('hot set: events, pops, acks, stats, trim and clear on every partition at once', async () => {
  const hot = new HotSet(redis, { keyPrefix: PREFIX });
  const now = await hot.serverTimeMs();
  await Promise.all(partitions.map((p) => hot.setEpoch(p, 1)));
  // Concurrent calls for partitions on different nodes: auto-pipelining must split them per node.
  const outcomes = await Promise.all(
    partitions.map((p) =>
      hot.applyEvents(
        p,
        1,
        [0, 1, 2, 3].map((i) => ({ kind: 'schedule' as const, job: job(p, i, now - 1000 + i) })),
      ),
    ),
  );
  expect(outcomes.flat().every((o) => o === 'added')).toBe(true);
  const popped = await Promise.all(
    partitions.map((p) =>
      hot.popDue(p, 1, {
        classes: [
          { name: 'critical', limit: 10 },
          { name: 'default', limit: 10 },
        ],
      }),
    ),
  );
  expect(popped.map((r) => r.jobs.length)).toEqual(partitions.map(() => 4));
  await Promise.all(
    partitions.map((p) =>
      hot.ack(
        p,
        1,
        [0, 1, 2, 3].map((i) => ({ jobId: `j-${p}-${i}`, version: 1 })),
      ),
    ),
  );
  const sizes = await Promise.all(partitions.map((p) => hot.size(p)));
  expect(sizes.every((s) => s.due === 0 && s.inflight === 0)).toBe(true);
  await Promise.all(partitions.map((p) => hot.schedule(p, 1, job(p, 9, now + 3_600_000))));
  expect((await Promise.all(partitions.map((p) => hot.stats(p)))).every((s) => s.jobs === 1)).toBe(true);
  expect(await Promise.all(partitions.map((p) => hot.trim(p, 1, 60_000)))).toEqual(partitions.map(() => 1));
  await Promise.all(partitions.map((p) => hot.schedule(p, 1, job(p, 8, now + 1000))));
  await Promise.all(partitions.map((p) => hot.clear(p, 1)));
  expect((await Promise.all(partitions.map((p) => hot.size(p)))).every((s) => s.due === 0)).toBe(true);
});

test('leases: one claim, renew and release call for attempts of every partition', async () => {
  const hot = new HotSet(redis, { keyPrefix: PREFIX });
  const leases = new Leases(redis, { keyPrefix: PREFIX });
  const now = await hot.serverTimeMs();
  await Promise.all(partitions.map((p) => hot.setEpoch(p, 2)));
  await Promise.all(partitions.map((p) => hot.restoreAttempts(p, 2, [])));
  await Promise.all(partitions.map((p) => hot.schedule(p, 2, job(p, 5, now + 60_000))));
  const attempts = partitions.map((p) => ({ jobId: `j-${p}-5`, shard: p, fence: 1, version: 1, epoch: 2 }));
  const value = <T>(r: PromiseSettledResult<T>) => (r.status === 'fulfilled' ? r.value : String(r.reason));
  expect((await leases.claimMany(attempts, 'w1', 5000)).map(value)).toEqual(partitions.map(() => 'OK'));
  expect((await leases.renewMany(attempts, 'w1', 5000)).map(value)).toEqual(partitions.map(() => 'OK'));
  expect(await Promise.all(partitions.map((p) => leases.running(p)))).toEqual(partitions.map(() => 1));
  const states = await leases.attemptStates(3, [attempts[3]!]);
  expect(states).toEqual([{ state: 'held', workerId: 'w1' }]);
  const released = await leases.releaseMany(
    attempts.map((attempt) => ({ attempt, done: true })),
    'w1',
  );
  expect(released.map(value)).toEqual(partitions.map(() => 'OK'));
  expect(await Promise.all(partitions.map((p) => leases.running(p)))).toEqual(partitions.map(() => 0));
  const reaped = await Promise.all(partitions.map((p) => leases.reap(p, 2, 10)));
  expect(reaped.every((r) => r.reaped.length === 0)).toBe(true);
});

test('memory use is read from every master (INFO answers for one node only)', async () => {
  const use = await memoryUse(redis);
  expect(use).toBeGreaterThan(0);
  expect(use).toBeLessThan(0.5);
});

test('rate limits: set, take and refund tokens of several classes', async () => {
  const limiter = new RateLimiter(redis, { keyPrefix: PREFIX });
  await limiter.setLimit('io', { ratePerSec: 10, burst: 5 });
  await limiter.setLimit('cpu', { ratePerSec: 10, burst: 3 });
  expect(await limiter.limits()).toEqual({
    io: { ratePerSec: 10, burst: 5 },
    cpu: { ratePerSec: 10, burst: 3 },
  });
  const granted = await limiter.take(
    new Map([
      ['io', 100],
      ['cpu', 100],
    ]),
  );
  expect(granted).toEqual(
    new Map([
      ['io', 5],
      ['cpu', 3],
    ]),
  );
  await limiter.refund(new Map([['io', 2]]));
  expect(await limiter.clearLimit('io')).toBe(true);
});
