import { LAG_HISTORY_BOUNDS_MS, lagBucket } from '@kairos/core';
import { markPostgresOnly, takePartitionEpoch } from '@kairos/db';
import { PermanentError } from '@kairos/worker-sdk';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';
import { api, createSchedule, type Loose } from '../support/schedules.js';

// GET /v1/overview on the real pipeline: live jobs by tenant, class and state; the dispatch lag
// history the delay tier writes (its counts equal the dispatches, its percentiles land in the
// buckets of the true ones); a schedule missing its SLA; PostgreSQL-only partitions under the
// owner's epoch; canaries for keys of every tenant; and a tenant's key sees its own tenant only.

interface Overview extends Loose {
  jobs: { tenant: string; resource_class: string; state: string; count: number }[];
  dispatch_lag: {
    resource_class: string;
    points: { at: string; count: number; p50_ms: number; p99_ms: number; max_ms: number }[];
  }[];
  canaries: {
    resource_class: string;
    last_success_at: string | null;
    latency_ms: number | null;
    stalled: boolean;
  }[];
  alerts: { name: string; labels: Record<string, string>; since: string; summary: string }[];
  postgres_only: { partition: number; since: string; owner: string }[];
}

async function overview(p: Pipeline, query = '', key = p.apiKey): Promise<Overview> {
  const r = await api<Overview>({ apiUrl: p.apiUrl, apiKey: key }, 'GET', `/v1/overview${query}`);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

async function tenantKey(p: Pipeline, tenant: string): Promise<string> {
  const r = await api<{ key: string }>(p, 'POST', '/v1/keys', {
    name: `${tenant}-reader`,
    tenant,
    scopes: ['jobs:read'],
  });
  expect(r.status).toBe(201);
  return r.json.key;
}

async function createJobs(p: Pipeline, tenant: string, cls: string, type: string, dueAt: Date, n: number) {
  const jobs = Array.from({ length: n }, () => ({
    tenant,
    type,
    resource_class: cls,
    payload: {},
    due_at: dueAt.toISOString(),
    max_attempts: 1,
  }));
  const r = await api<{ jobs: { id: string }[] }>(p, 'POST', '/v1/jobs:batch', { jobs });
  expect(r.status).toBe(201);
  return r.json.jobs.map((j) => j.id);
}

/** The true q-quantile of the lags as the histogram ranks it (the sample at rank ⌈q·n⌉). */
const rankSample = (sorted: readonly number[], q: number) =>
  sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;

/** The bounds of the bucket a lag falls in. */
const bucketOf = (ms: number): [number, number] => {
  const i = lagBucket(ms);
  return [i === 0 ? 0 : LAG_HISTORY_BOUNDS_MS[i - 1]!, LAG_HISTORY_BOUNDS_MS[i] ?? Infinity];
};

test('jobs by tenant, class and state; the dispatch lag history; a missed SLA; PostgreSQL-only marks; tenant keys see their own', async () => {
  const ns = await useNamespace('overview');
  const p = await startPipeline(ns, { scheduleSla: { intervalMs: 100 } });
  const worker = p.worker();
  worker.handle('ov.ok', () => undefined);
  worker.handle('ov.fail', () => {
    throw new PermanentError('no');
  });
  worker.handle('ov.sla', () => {
    throw new PermanentError('the report service answers 500');
  });
  await worker.start();
  const acme = await tenantKey(p, 'acme');
  const globex = await tenantKey(p, 'globex');

  // io: 40 jobs run now, one dead letter; later jobs waiting for each tenant; a failing schedule.
  const now = Date.now();
  await createJobs(p, 'acme', 'io', 'ov.ok', new Date(now + 1500), 40);
  await createJobs(p, 'acme', 'io', 'ov.fail', new Date(now + 1500), 1);
  await createJobs(p, 'acme', 'default', 'ov.ok', new Date(now + 3_600_000), 3);
  await createJobs(p, 'globex', 'io', 'ov.ok', new Date(now + 3_600_000), 2);
  const sla = await createSchedule(p, {
    tenant: 'acme',
    cron: '* * * * * *',
    time_zone: 'UTC',
    job: { type: 'ov.sla', resource_class: 'critical', max_attempts: 1 },
    sla_ms: 1000,
  });

  // Every io dispatch (these jobs' only) is in the history once the tier flushed (≤ 10 s).
  const ioLags = () =>
    p.dispatched
      .filter((d) => d.record.resource_class === 'io')
      .map((d) => Math.max(0, d.atMs - d.record.due_at));
  await eventually('the io jobs to be dispatched', () => ioLags().length === 41, 30_000);
  const io = async () => (await overview(p)).dispatch_lag.find((c) => c.resource_class === 'io')!;
  await eventually(
    'the io dispatches in the lag history',
    async () => (await io()).points.reduce((n, x) => n + x.count, 0) === 41,
    30_000,
  );
  const points = (await io()).points;
  const lags = ioLags().sort((a, b) => a - b);
  const merged = points.length === 1 ? points[0]! : undefined;
  for (const pt of points) {
    expect(pt.p50_ms).toBeLessThanOrEqual(pt.p99_ms);
    expect(pt.p99_ms).toBeLessThanOrEqual(pt.max_ms);
    expect(pt.max_ms).toBeLessThan(10_000);
  }
  expect(Math.max(...points.map((x) => x.max_ms))).toBeCloseTo(lags.at(-1)!, 3);
  // All in one minute (the usual case): its percentiles are in the buckets of the true ones.
  if (merged) {
    const [lo50, hi50] = bucketOf(rankSample(lags, 0.5));
    const [lo99, hi99] = bucketOf(rankSample(lags, 0.99));
    expect(merged.p50_ms).toBeGreaterThanOrEqual(lo50);
    expect(merged.p50_ms).toBeLessThanOrEqual(hi50);
    expect(merged.p99_ms).toBeGreaterThanOrEqual(Math.min(lo99, merged.max_ms));
    expect(merged.p99_ms).toBeLessThanOrEqual(hi99);
  }
  console.log(
    `io lag: ${lags.length} dispatches, points ${JSON.stringify(points)}, true max ${lags.at(-1)} ms`,
  );
  // Every configured class is listed, with or without dispatches.
  expect((await overview(p)).dispatch_lag.map((c) => c.resource_class)).toEqual([
    'critical',
    'default',
    'io',
  ]);

  // Jobs: the dead letter, the waiting ones; a tenant's key sees its own tenant only.
  const count = (o: Overview, tenant: string, cls: string, state: string) =>
    o.jobs.find((j) => j.tenant === tenant && j.resource_class === cls && j.state === state)?.count ?? 0;
  await eventually('the dead letter', async () => count(await overview(p), 'acme', 'io', 'FAILED') === 1);
  const all = await overview(p);
  expect(all.tenant).toBeNull();
  expect(count(all, 'acme', 'default', 'SCHEDULED')).toBe(3);
  expect(count(all, 'globex', 'io', 'SCHEDULED')).toBe(2);
  expect(all.jobs.some((j) => j.tenant.startsWith('_'))).toBe(false);
  const mine = await overview(p, '', acme);
  expect(mine.tenant).toBe('acme');
  expect(new Set(mine.jobs.map((j) => j.tenant))).toEqual(new Set(['acme']));
  expect(count(mine, 'acme', 'default', 'SCHEDULED')).toBe(3);
  const theirs = await overview(p, '?tenant=globex');
  expect(theirs.jobs.map((j) => [j.tenant, j.resource_class, j.state, j.count])).toEqual([
    ['globex', 'io', 'SCHEDULED', 2],
  ]);
  const other = await api({ apiUrl: p.apiUrl, apiKey: acme }, 'GET', '/v1/overview?tenant=globex');
  expect(other.status).toBe(403);
  // No canary here (the harness runs none): nothing to show, nothing stalled.
  expect(all.canaries).toEqual([]);
  expect(all.alerts.filter((a) => a.name === 'canary_stalled')).toEqual([]);

  // The failing schedule misses its SLA: its tenant and every-tenant keys see the alert, others not.
  const slaAlerts = (o: Overview) =>
    o.alerts.filter((a) => a.name === 'schedule_sla_missed' && a.labels.schedule === sla.id);
  await eventually(
    'schedule_sla_missed',
    async () => slaAlerts(await overview(p, '', acme)).length === 1,
    30_000,
  );
  expect(slaAlerts(await overview(p))).toHaveLength(1);
  expect(slaAlerts(await overview(p, '', acme))[0]!.labels.tenant).toBe('acme');
  expect((await overview(p, '', globex)).alerts).toEqual([]);
  expect((await api(p, 'DELETE', `/v1/schedules/${sla.id}`)).status).toBe(200);

  // PostgreSQL-only marks: written under the owner's epoch only, cleared by a new epoch.
  const spare = 900 + Math.floor(Math.random() * 99);
  const epoch = await takePartitionEpoch(p.pool, spare, 'tier-a');
  expect(await markPostgresOnly(p.pool, spare, epoch + 1, true)).toBe(false);
  expect((await overview(p)).postgres_only).toEqual([]);
  expect(await markPostgresOnly(p.pool, spare, epoch, true)).toBe(true);
  const marked = await overview(p);
  expect(marked.postgres_only).toMatchObject([{ partition: spare, owner: 'tier-a' }]);
  expect(marked.alerts.filter((a) => a.name === 'postgres_only')).toMatchObject([
    { labels: { partition: String(spare) }, since: marked.postgres_only[0]!.since },
  ]);
  // System state is for keys of every tenant.
  expect((await overview(p, '', acme)).postgres_only).toEqual([]);
  await takePartitionEpoch(p.pool, spare, 'tier-b');
  expect(await markPostgresOnly(p.pool, spare, epoch, true)).toBe(false);
  expect((await overview(p)).postgres_only).toEqual([]);

  // Bad parameters: 400 with the field named.
  for (const q of ['?minutes=0', '?minutes=1441', '?minutes=x', '?colour=red']) {
    const r = await api<{ code: string; errors: { field: string }[] }>(p, 'GET', `/v1/overview${q}`);
    expect(r.status, q).toBe(400);
    expect(r.json.code).toBe('VALIDATION');
    expect(r.json.errors.length).toBeGreaterThan(0);
  }
  expect((await overview(p, '?minutes=1')).dispatch_lag).toHaveLength(3);
}, 120_000);

test('canaries: keys of every tenant see each class, a class without workers stalled and alerting', async () => {
  const ns = await useNamespace('overview-canary');
  const p = await startPipeline(ns, { canary: { intervalMs: 1000, stallMs: 4000 } });
  const worker = p.worker({ resourceClasses: ['critical', 'default'], groupId: `${ns.prefix}w-some` });
  await worker.start();
  const acme = await tenantKey(p, 'acme');
  await eventually(
    'canaries of critical and default to succeed, io to stall',
    async () => {
      const o = await overview(p);
      const by = new Map(o.canaries.map((c) => [c.resource_class, c]));
      return (
        by.get('critical')?.last_success_at != null &&
        by.get('default')?.last_success_at != null &&
        by.get('io')?.stalled === true
      );
    },
    30_000,
  );
  const o = await overview(p);
  expect(o.canaries.map((c) => [c.resource_class, c.stalled])).toEqual([
    ['critical', false],
    ['default', false],
    ['io', true],
  ]);
  expect(o.canaries.find((c) => c.resource_class === 'default')!.latency_ms).toBeGreaterThan(0);
  expect(o.canaries.find((c) => c.resource_class === 'io')!.last_success_at).toBeNull();
  expect(o.alerts.filter((a) => a.name === 'canary_stalled').map((a) => a.labels)).toEqual([
    { resource_class: 'io' },
  ]);
  // Canaries are dispatched like any job: their lag is in the history (every class's).
  await eventually(
    'the canaries in the lag history',
    async () => (await overview(p)).dispatch_lag.every((c) => c.points.length > 0),
    30_000,
  );
  // A tenant's key sees neither canaries nor their alerts, and no canary in its jobs.
  const mine = await overview(p, '', acme);
  expect(mine.canaries).toEqual([]);
  expect(mine.alerts).toEqual([]);
  expect(mine.jobs).toEqual([]);
}, 90_000);
