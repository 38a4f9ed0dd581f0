import { KairosError } from '@kairos/core';
import { createDelayTierMetrics } from '@kairos/observability';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import type { PartitionStatus, RateLimit, TierAdmin } from '../src/admin.js';
import { createAdminServer } from '../src/admin-server.js';

/** An in-memory tier: records every change so tests can assert that bad input changed nothing. */
class MemoryAdmin implements TierAdmin {
  configuredMs = 3_600_000;
  /** Simulated memory pressure: the effective window never exceeds this. */
  capMs = Number.POSITIVE_INFINITY;
  limits: Record<string, RateLimit> = { io: { ratePerSec: 50, burst: 100 } };
  partitions: PartitionStatus[] = [
    { partition: 0, epoch: 7, mode: 'hot', hotJobs: 12, oldestDueAgeMs: 40 },
    { partition: 1, epoch: null, mode: 'fallback', hotJobs: 0, oldestDueAgeMs: null },
  ];
  changes: string[] = [];
  failWith: Error | null = null;

  lookahead() {
    return { configuredMs: this.configuredMs, effectiveMs: Math.min(this.configuredMs, this.capMs) };
  }
  setLookahead(ms: number) {
    this.changes.push(`lookahead ${ms}`);
    this.configuredMs = ms;
  }
  rateLimits() {
    return this.fail() ?? Promise.resolve({ ...this.limits });
  }
  setRateLimit(resourceClass: string, limit: RateLimit) {
    this.changes.push(`set ${resourceClass}`);
    this.limits[resourceClass] = limit;
    return Promise.resolve();
  }
  clearRateLimit(resourceClass: string) {
    this.changes.push(`clear ${resourceClass}`);
    delete this.limits[resourceClass];
    return Promise.resolve();
  }
  status() {
    return this.fail() ?? Promise.resolve({ partitions: this.partitions });
  }
  private fail(): Promise<never> | null {
    return this.failWith === null ? null : Promise.reject(this.failWith);
  }
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function setup() {
  const admin = new MemoryAdmin();
  const metrics = createDelayTierMetrics();
  app = await createAdminServer({ admin, metrics, keys: 'off' });
  return { admin, metrics, app };
}

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
  status: number,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  return res.json() as { code: string; status: number; errors?: { field: string; message: string }[] };
}

const fieldsOf = (p: { errors?: { field: string }[] }) => (p.errors ?? []).map((e) => e.field).sort();

describe('delay tier admin server', () => {
  test('serves health and Prometheus metrics', async () => {
    const { app, metrics } = await setup();
    metrics.dispatched.inc({ resource_class: 'io' }, 3);
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(metrics.contentType);
    expect(res.body).toContain('kairos_dispatched_total{resource_class="io"} 3');
  });

  test('reports partition status in snake_case', async () => {
    const { app } = await setup();
    const res = await app.inject({ method: 'GET', url: '/admin/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      partitions: [
        { partition: 0, epoch: 7, mode: 'hot', hot_jobs: 12, oldest_due_age_ms: 40 },
        { partition: 1, epoch: null, mode: 'fallback', hot_jobs: 0, oldest_due_age_ms: null },
      ],
    });
  });

  test('reads and sets the lookahead; the effective window can be smaller', async () => {
    const { app, admin } = await setup();
    admin.capMs = 600_000;
    const before = await app.inject({ method: 'GET', url: '/admin/lookahead' });
    expect(before.json()).toEqual({ configured_ms: 3_600_000, effective_ms: 600_000 });
    const res = await app.inject({
      method: 'PUT',
      url: '/admin/lookahead',
      payload: { lookahead_ms: 300_000 },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ configured_ms: 300_000, effective_ms: 300_000 });
    expect(admin.changes).toEqual(['lookahead 300000']);
  });

  test.each([
    [{ lookahead_ms: 999 }, ['lookahead_ms']],
    [{ lookahead_ms: 86_400_001 }, ['lookahead_ms']],
    [{ lookahead_ms: 60_000.5 }, ['lookahead_ms']],
    [{ lookahead_ms: '60000' }, ['lookahead_ms']],
    [{}, ['lookahead_ms']],
    [{ lookahead_ms: 60_000, lookaheadMs: 1, extra: true }, ['extra', 'lookaheadMs']],
    [[60_000], ['(body)']],
  ])('rejects lookahead body %j naming %j, changing nothing', async (payload, fields) => {
    const { app, admin } = await setup();
    const res = await app.inject({ method: 'PUT', url: '/admin/lookahead', payload });
    const p = expectProblem(res, 400);
    expect(p.code).toBe('VALIDATION');
    expect(fieldsOf(p)).toEqual(fields);
    expect(admin.changes).toEqual([]);
    expect(admin.configuredMs).toBe(3_600_000);
  });

  test('rejects malformed JSON and a missing body as problems', async () => {
    const { app, admin } = await setup();
    const bad = await app.inject({
      method: 'PUT',
      url: '/admin/lookahead',
      headers: { 'content-type': 'application/json' },
      payload: '{"lookahead_ms":',
    });
    expect(expectProblem(bad, 400).code).toBe('VALIDATION');
    const none = await app.inject({ method: 'PUT', url: '/admin/lookahead' });
    expect(fieldsOf(expectProblem(none, 400))).toEqual(['(body)']);
    expect(admin.changes).toEqual([]);
  });

  test('lists, sets and clears rate limits', async () => {
    const { app, admin } = await setup();
    const put = await app.inject({
      method: 'PUT',
      url: '/admin/rate-limits/gpu',
      payload: { rate_per_sec: 0.5, burst: 2 },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ resource_class: 'gpu', rate_per_sec: 0.5, burst: 2 });
    const list = await app.inject({ method: 'GET', url: '/admin/rate-limits' });
    expect(list.json()).toEqual({
      rate_limits: { io: { rate_per_sec: 50, burst: 100 }, gpu: { rate_per_sec: 0.5, burst: 2 } },
    });
    const del = await app.inject({ method: 'DELETE', url: '/admin/rate-limits/io' });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect(admin.limits).toEqual({ gpu: { ratePerSec: 0.5, burst: 2 } });
    expect(admin.changes).toEqual(['set gpu', 'clear io']);
  });

  test.each([
    ['io', { rate_per_sec: 0, burst: 1 }, ['rate_per_sec']],
    ['io', { rate_per_sec: -3, burst: 1 }, ['rate_per_sec']],
    ['io', { rate_per_sec: 10, burst: 0 }, ['burst']],
    ['io', { rate_per_sec: 10, burst: 2.5 }, ['burst']],
    ['io', { rate_per_sec: 10 }, ['burst']],
    ['io', { rate_per_sec: 10, burst: 1, ratePerSec: 1 }, ['ratePerSec']],
    ['GPU', { rate_per_sec: 10, burst: 1 }, ['class']],
    ['GPU', { rate_per_sec: 'fast', burst: 0 }, ['burst', 'class', 'rate_per_sec']],
    // Out of bounds: a typo's 1e-9/s would hold a class for every tenant for ever.
    ['io', { rate_per_sec: 1e-9, burst: 1 }, ['rate_per_sec']],
    ['io', { rate_per_sec: 0.0099, burst: 1 }, ['rate_per_sec']],
    ['io', { rate_per_sec: 100_001, burst: 100_001 }, ['burst', 'rate_per_sec']],
  ])('rejects rate limit %s %j naming %j, changing nothing', async (rc, payload, fields) => {
    const { app, admin } = await setup();
    const res = await app.inject({ method: 'PUT', url: `/admin/rate-limits/${rc}`, payload });
    expect(fieldsOf(expectProblem(res, 400))).toEqual(fields);
    expect(admin.changes).toEqual([]);
    expect(admin.limits).toEqual({ io: { ratePerSec: 50, burst: 100 } });
  });

  test('refuses to clear a rate limit of an invalid class', async () => {
    const { app, admin } = await setup();
    const res = await app.inject({ method: 'DELETE', url: '/admin/rate-limits/no%20such' });
    expect(fieldsOf(expectProblem(res, 400))).toEqual(['class']);
    expect(admin.changes).toEqual([]);
  });

  test('maps tier errors: KairosError by code, anything else to a bare 500', async () => {
    const { app, admin } = await setup();
    admin.failWith = new KairosError('DEPENDENCY_UNAVAILABLE', 'redis is down');
    const down = await app.inject({ method: 'GET', url: '/admin/status' });
    expect(expectProblem(down, 503).code).toBe('DEPENDENCY_UNAVAILABLE');
    admin.failWith = new Error('secret internals');
    const boom = await app.inject({ method: 'GET', url: '/admin/rate-limits' });
    const p = expectProblem(boom, 500);
    expect(p.code).toBe('INTERNAL');
    expect(boom.body).not.toContain('secret internals');
  });

  test('unknown routes are 404 problems', async () => {
    const { app } = await setup();
    expect(expectProblem(await app.inject({ method: 'GET', url: '/admin/nope' }), 404).code).toBe(
      'NOT_FOUND',
    );
  });
});
