import { afterAll, beforeAll, expect, test } from 'vitest';
import type { HotRecord } from '@kairos/delay-tier';
import { InProcessPipeline } from '@kairos/ops';
import { Redis } from 'ioredis';
import { useNamespace } from '../support/namespace.js';
import { eventually, RESOURCE_CLASSES } from '../support/pipeline.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * DESIGN: Redis runs with maxmemory-policy noeviction; when it refuses a write at maxmemory the
 * hot path degrades to PostgreSQL-only scheduling and nothing is dropped (runbook 1). The whole
 * pipeline runs against a dedicated redis-server (the shared one is not ours to starve).
 */

const FALLBACK_PROBE_MS = 500;
const MIN_LOOKAHEAD_MS = 5000;
const LOOKAHEAD_MS = 600_000;
const FILLER_KEY = 'redis-oom-test:filler';

const TENANTS = ['acme', 'globex', 'initech'];
const PHASE1 = 300; // due 4–9 s out, in the hot set when memory runs out
const PHASE2 = 1500; // created while Redis refuses writes, due 2–12 s out
const FAR = 60; // created while Redis refuses writes, due beyond the shrunk window (and past recovery)
const FAR_DELAY_MS = 40_000;
const FINAL = 300; // created after recovery, due 4–7 s out

async function memory(redis: Redis): Promise<{ used: number; max: number }> {
  const info = await redis.info('memory');
  return {
    used: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN),
    max: Number(/maxmemory:(\d+)/.exec(info)?.[1] ?? NaN),
  };
}

let server: RedisServer | undefined;
let redisUrl = '';
/** Our own client of the dedicated server (no key prefix): squeezes and gives back memory. */
let admin: Redis | undefined;

beforeAll(async () => {
  server = await startRedisServer(['--maxmemory', '64mb']);
  redisUrl = server.url;
  admin = server.client();
});

afterAll(async () => {
  await admin?.quit().catch(() => admin?.disconnect());
  await server?.stop();
});

interface Run {
  readonly startedAt: number;
  readonly dueAt: number;
}

/** The API's overview (an admin key): PostgreSQL-only partitions and the alerts. */
async function overviewOf(p: InProcessPipeline): Promise<{
  postgres_only: { partition: number }[];
  alerts: { name: string; labels: Record<string, string> }[];
}> {
  const res = await fetch(`${p.apiUrl}/v1/overview`, { headers: { authorization: `Bearer ${p.apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Awaited<ReturnType<typeof overviewOf>>;
}

const sameList = (a: readonly number[], b: readonly number[]) => a.join(',') === b.join(',');

test('Redis at maxmemory (noeviction): partitions run PostgreSQL-only, nothing is lost or run twice or early, and they return to the hot set once memory is back', async () => {
  const redis = admin!;
  expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);

  const ns = await useNamespace('redis-oom');
  /** Per job: whether its partition was in PostgreSQL-only mode when it was dispatched. */
  const dispatchedInFallback = new Map<string, boolean[]>();
  let fallbackNow: () => number[] = () => [];
  const onDispatched = (record: HotRecord) => {
    const list = dispatchedInFallback.get(record.job_id) ?? [];
    list.push(fallbackNow().includes(record.shard));
    dispatchedInFallback.set(record.job_id, list);
  };
  const p = await InProcessPipeline.start({
    services: { ...ns.services, redisUrl },
    id: ns.id,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
    logLevel: process.env.KAIROS_TEST_LOG ?? 'warn',
    delayTier: {
      fallbackProbeMs: FALLBACK_PROBE_MS,
      preloadIntervalMs: 200,
      minLookaheadMs: MIN_LOOKAHEAD_MS,
      lookaheadMs: LOOKAHEAD_MS,
    },
    onDispatched,
  });
  ns.defer(() => p.stop());
  const tier = p.delayTier;
  fallbackNow = () => tier.fallbackPartitions();
  const partitions = Array.from({ length: ns.services.jobEventPartitions }, (_, i) => i);

  const runs = new Map<string, Run[]>();
  const worker = p.worker();
  worker.handle('oom.job', (_payload, ctx) => {
    const list = runs.get(ctx.jobId) ?? [];
    list.push({ startedAt: Date.now(), dueAt: ctx.dueAt.getTime() });
    runs.set(ctx.jobId, list);
  });
  await worker.start();

  /** Creates `n` jobs due from `fromMs` spread over `spreadMs`; returns their ids. */
  const create = async (phase: string, n: number, fromMs: number, spreadMs: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let b = 0; b < n; b += 500) {
      const batch = Array.from({ length: Math.min(500, n - b) }, (_, i) => {
        const k = b + i;
        return {
          tenant: TENANTS[k % TENANTS.length],
          type: 'oom.job',
          resource_class: RESOURCE_CLASSES[k % RESOURCE_CLASSES.length],
          payload: { phase, k },
          due_at: new Date(fromMs + Math.floor((k * spreadMs) / n)).toISOString(),
        };
      });
      for (const r of await p.commands.createJobs(batch)) {
        expect(r.created).toBe(true);
        ids.push(r.job.id);
      }
    }
    return ids;
  };
  const hotJobs = async () => {
    let jobs = 0;
    for (const part of partitions) jobs += (await tier.hotSet.stats(part)).jobs;
    return jobs;
  };
  const succeeded = async (ids: readonly string[]) => {
    const r = await p.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
      [ids],
    );
    return r.rows[0]?.n ?? 0;
  };
  const fallbackMetric = async () => {
    const m = await tier.metrics.fallback.get();
    return new Map(m.values.map((v) => [Number(v.labels.partition), v.value]));
  };
  /** Every job ran exactly once, not before it was due, and ended SUCCEEDED, dispatched on time. */
  const expectRanOnce = async (what: string, ids: readonly string[]) => {
    // The dispatcher reports a dispatch just after its commit, which a fast worker may overtake.
    await eventually(
      `${what} dispatches to be reported`,
      () => Promise.resolve(ids.every((id) => dispatchedInFallback.has(id))),
      5000,
    );
    const rows = await p.pool.query<{ id: string; state: string; due_at: Date; dispatched_at: Date | null }>(
      'SELECT id, state, due_at, dispatched_at FROM jobs WHERE id = ANY($1::uuid[])',
      [ids],
    );
    expect(rows.rows.length, what).toBe(ids.length);
    for (const row of rows.rows) {
      expect(row.state, `${what} job ${row.id}`).toBe('SUCCEEDED');
      expect(row.dispatched_at!.getTime(), `${what} job ${row.id} dispatched early`).toBeGreaterThanOrEqual(
        row.due_at.getTime(),
      );
    }
    for (const id of ids) {
      const r = runs.get(id) ?? [];
      expect(r.length, `${what} job ${id}: handler runs`).toBe(1);
      expect(r[0]!.startedAt, `${what} job ${id} started before due`).toBeGreaterThanOrEqual(r[0]!.dueAt);
      expect(dispatchedInFallback.get(id)?.length, `${what} job ${id}: dispatches`).toBe(1);
    }
  };

  // 1. Hot path working: a first batch reaches the hot set (some may already run from it).
  const phase1 = await create('p1', PHASE1, Date.now() + 4000, 5000);
  await eventually(
    'the first batch to be in the hot set or dispatched from it',
    async () => (await hotJobs()) + phase1.filter((id) => dispatchedInFallback.has(id)).length >= PHASE1,
    30_000,
  );
  expect(tier.fallbackPartitions()).toEqual([]);
  expect(tier.admin().lookahead()).toEqual({ configuredMs: LOOKAHEAD_MS, effectiveMs: LOOKAHEAD_MS });

  // 2. Squeeze: maxmemory goes to just above what Redis used before an 8 MB filler was written
  // (from our own client, while there was room), so the data alone keeps Redis past the limit
  // (transient client buffers cannot hide it) and every memory-growing write is refused from
  // now on; reads and deletions still work.
  const before = await memory(redis);
  await redis.set(FILLER_KEY, 'x'.repeat(8 * 1024 * 1024));
  await redis.config('SET', 'maxmemory', String(before.used + 256 * 1024));
  await expect(redis.set('redis-oom-test:probe', 'x')).rejects.toThrow(/OOM/);

  // 3. More jobs while Redis refuses writes: near ones, and far ones beyond the shrunk window.
  const t2 = Date.now();
  const phase2 = await create('p2', PHASE2, t2 + 2000, 10_000);
  const far = await create('far', FAR, t2 + FAR_DELAY_MS, 1000);

  // Every partition gets events, so every partition meets the refusal and falls back.
  await eventually(
    'every partition to run PostgreSQL-only',
    () => Promise.resolve(tier.fallbackPartitions().length === partitions.length),
    20_000,
  );
  expect(tier.fallbackPartitions()).toEqual(partitions);
  expect(tier.admin().lookahead()).toEqual({ configuredMs: LOOKAHEAD_MS, effectiveMs: MIN_LOOKAHEAD_MS });
  expect((await tier.metrics.lookahead.get()).values[0]?.value).toBe(MIN_LOOKAHEAD_MS / 1000);
  const during = await fallbackMetric();
  for (const part of partitions)
    expect(during.get(part), `kairos_pg_fallback_active{partition=${part}}`).toBe(1);
  expect((await tier.admin().status()).partitions.map((s) => s.mode)).toEqual(
    partitions.map(() => 'fallback'),
  );
  // The API's overview shows it, from PostgreSQL (the tier marks each partition under its epoch).
  const pgOnly = async () => (await overviewOf(p)).postgres_only.map((x) => x.partition);
  await eventually('the overview to show every partition PostgreSQL-only', async () =>
    sameList(await pgOnly(), partitions),
  );
  expect((await overviewOf(p)).alerts.filter((a) => a.name === 'postgres_only').map((a) => a.labels)).toEqual(
    partitions.map((part) => ({ partition: String(part) })),
  );

  const near = [...phase1, ...phase2];
  await eventually(
    'every due job to succeed from PostgreSQL',
    async () => (await succeeded(near)) === near.length,
    45_000,
  );
  // Still out of memory: nothing recovered yet, and no far job went out early.
  expect(tier.fallbackPartitions()).toEqual(partitions);
  const stillSqueezed = await memory(redis);
  expect(stillSqueezed.used).toBeGreaterThan(stillSqueezed.max);
  await expectRanOnce('near', near);
  for (const id of phase2)
    expect(dispatchedInFallback.get(id), `job ${id} dispatched from PostgreSQL`).toEqual([true]);
  const far0 = await p.pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY state',
    [far],
  );
  expect(far0.rows).toEqual([{ state: 'SCHEDULED', n: FAR }]);
  for (const id of far) expect(runs.has(id), `far job ${id} ran early`).toBe(false);
  const p1Hot = phase1.filter((id) => dispatchedInFallback.get(id)?.[0] === false).length;

  // 4. Memory back: every partition leaves fallback on its own probe and rebuilds its hot set.
  await redis.del(FILLER_KEY);
  await redis.config('SET', 'maxmemory', String(64 * 1024 * 1024));
  const t4 = Date.now();
  await eventually(
    'every partition to leave PostgreSQL-only mode',
    () => Promise.resolve(tier.fallbackPartitions().length === 0),
    15_000,
  );
  const recoveredInMs = Date.now() - t4;
  expect(tier.admin().lookahead()).toEqual({ configuredMs: LOOKAHEAD_MS, effectiveMs: LOOKAHEAD_MS });
  expect((await tier.metrics.lookahead.get()).values[0]?.value).toBe(LOOKAHEAD_MS / 1000);
  const after = await fallbackMetric();
  for (const part of partitions)
    expect(after.get(part), `kairos_pg_fallback_active{partition=${part}}`).toBe(0);
  // Rebuilt from PostgreSQL: exactly the far jobs (stale entries of jobs dispatched meanwhile are gone).
  await eventually('the hot set to hold the far jobs again', async () => (await hotJobs()) === FAR, 10_000);
  expect((await tier.admin().status()).partitions.every((s) => s.mode === 'hot')).toBe(true);
  await eventually(
    'the overview to show no partition PostgreSQL-only',
    async () => (await pgOnly()).length === 0,
  );

  // 5. Jobs created after recovery go through the hot path (no partition falls back again).
  const fellBack = new Set<number>();
  const watch = setInterval(() => tier.fallbackPartitions().forEach((part) => fellBack.add(part)), 50);
  try {
    const final = await create('final', FINAL, Date.now() + 4000, 3000);
    await eventually(
      'the post-recovery batch to succeed',
      async () => (await succeeded(final)) === FINAL,
      30_000,
    );
    await expectRanOnce('final', final);
    for (const id of final)
      expect(dispatchedInFallback.get(id), `job ${id} dispatched from the hot set`).toEqual([false]);

    // The far jobs, created during the outage, run on time from the rebuilt hot set.
    await eventually(
      'the far jobs to succeed',
      async () => (await succeeded(far)) === FAR,
      FAR_DELAY_MS + 20_000,
    );
    await expectRanOnce('far', far);
    for (const id of far)
      expect(dispatchedInFallback.get(id), `far job ${id} dispatched from the hot set`).toEqual([false]);
  } finally {
    clearInterval(watch);
  }
  expect([...fellBack]).toEqual([]);
  await eventually('the hot set to empty', async () => (await hotJobs()) === 0, 5000);

  // Nothing else ran, and nothing ran twice.
  const all = new Set([...near, ...far]);
  expect(runs.size).toBe(all.size + FINAL);
  expect([...runs.values()].every((r) => r.length === 1)).toBe(true);
  console.log(
    `redis-oom: ${p1Hot} of ${PHASE1} first-batch jobs went out from the hot set, the rest and ` +
      `${PHASE2} more from PostgreSQL only; all partitions back on their hot sets ` +
      `${recoveredInMs} ms after memory came back`,
  );
}, 120_000);
