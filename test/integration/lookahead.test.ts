import { createAdminServer } from '@kairos/delay-tier';
import { KeyVerifier } from '@kairos/http';
import { withScripts } from '@kairos/redis';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

const WINDOW_MS = 4000;

/** Polls (every 25 ms) until the job's hot-set entry exists; returns the Redis time it was first seen. */
async function firstSeenInHotSet(
  p: Pipeline,
  shard: number,
  jobId: string,
  timeoutMs = 30_000,
): Promise<number> {
  const redis = p.ns.redis();
  const scripts = withScripts(redis);
  const key = p.delayTier.hotSet.keys(shard).jobs;
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await scripts.serverTime();
      if ((await redis.hexists(key, jobId)) === 1) return now;
      if (Date.now() > deadline) throw new Error(`job ${jobId} never entered the hot set`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await redis.quit();
  }
}

async function inHotSet(p: Pipeline, shard: number, jobId: string): Promise<boolean> {
  const redis = p.ns.redis();
  try {
    return (await redis.hexists(p.delayTier.hotSet.keys(shard).jobs, jobId)) === 1;
  } finally {
    await redis.quit();
  }
}

test('two tiers: a job due beyond the lookahead window stays in PostgreSQL until the pre-loader brings it in; the window shrinks at run time through the admin API', async () => {
  const ns = await useNamespace('lookahead');
  const p = await startPipeline(ns, { delayTier: { lookaheadMs: WINDOW_MS, preloadIntervalMs: 100 } });
  const admin = await createAdminServer({
    admin: p.delayTier.admin(),
    metrics: p.delayTier.metrics,
    keys: new KeyVerifier({ pool: p.pool }),
  });
  const adminUrl = await admin.listen({ host: '127.0.0.1', port: 0 });
  ns.defer(() => admin.close());
  const auth = { authorization: `Bearer ${p.apiKey}` };
  // The admin endpoints need an admin key; /metrics and /healthz stay open for scrapers and probes.
  expect((await fetch(`${adminUrl}/admin/lookahead`)).status).toBe(401);
  const started = new Map<string, number>();
  const worker = p.worker();
  worker.handle('window.check', (_payload, ctx) => void started.set(ctx.jobId, Date.now()));
  await worker.start();

  expect(await (await fetch(`${adminUrl}/admin/lookahead`, { headers: auth })).json()).toEqual({
    configured_ms: WINDOW_MS,
    effective_ms: WINDOW_MS,
  });

  const now = Date.now();
  const job = (dueInMs: number) => ({
    tenant: 'acme',
    type: 'window.check',
    resource_class: 'default',
    due_at: new Date(now + dueInMs).toISOString(),
  });
  // `near` is inside the window when its event arrives; `far` (12 s) is not.
  const [near, far] = await p.commands.createJobs([job(1500), job(12_000)]);
  const nearSeen = await firstSeenInHotSet(p, near!.job.shard, near!.job.id);
  expect(nearSeen).toBeLessThan(near!.job.dueAt.getTime());

  const farSeen = await firstSeenInHotSet(p, far!.job.shard, far!.job.id);
  // Brought in by the pre-loader as it came within the window, not by its event ~11 s earlier.
  expect(farSeen).toBeGreaterThanOrEqual(far!.job.dueAt.getTime() - WINDOW_MS);
  expect(farSeen).toBeLessThan(far!.job.dueAt.getTime());

  // Shrink the window to 1 s: a job already in the hot set 3 s ahead is trimmed back to
  // PostgreSQL, and brought in again 1 s before it is due.
  const before = Date.now();
  const [mid] = await p.commands.createJobs([job(before - now + 3500)]);
  await firstSeenInHotSet(p, mid!.job.shard, mid!.job.id);
  const bad = await fetch(`${adminUrl}/admin/lookahead`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ lookahead_ms: 5 }),
  });
  expect(bad.status).toBe(400);
  expect(p.delayTier.admin().lookahead().configuredMs).toBe(WINDOW_MS);
  const put = await fetch(`${adminUrl}/admin/lookahead`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ lookahead_ms: 1000 }),
  });
  expect(put.status).toBe(200);
  await eventually(
    'the trimmed job to leave the hot set',
    async () => !(await inHotSet(p, mid!.job.shard, mid!.job.id)),
    10_000,
  );
  const midSeen = await firstSeenInHotSet(p, mid!.job.shard, mid!.job.id);
  expect(midSeen).toBeGreaterThanOrEqual(mid!.job.dueAt.getTime() - 1000);

  await eventually('all three jobs to run', () => started.size === 3, 30_000);
  for (const r of [near, far, mid]) {
    // Never early (same host clock as the job's due time).
    expect(started.get(r!.job.id)).toBeGreaterThanOrEqual(r!.job.dueAt.getTime());
  }

  // Metrics: dispatch lag per class and tenant, hot-set gauges per partition, the window.
  const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
  expect(metrics).toMatch(
    /kairos_dispatch_lag_seconds_count\{[^}]*resource_class="default"[^}]*tenant="acme"[^}]*\} 3/,
  );
  expect(metrics).toMatch(/kairos_hot_set_jobs\{partition="\d+"\}/);
  expect(metrics).toMatch(/kairos_lookahead_window_seconds 1\b/);
  expect(metrics).toMatch(/kairos_partition_epoch_changes_total\{partition="\d+"\} 1/);
  const status = (await (await fetch(`${adminUrl}/admin/status`, { headers: auth })).json()) as {
    partitions: { partition: number; epoch: number | null; mode: string }[];
  };
  expect(status.partitions.length).toBe(p.delayTier.ownedPartitions().length);
  expect(status.partitions.every((s) => s.mode === 'hot' && s.epoch !== null)).toBe(true);
});

test('pre-dispatch releases a job up to the lead early; the worker holds it and starts it on time', async () => {
  const ns = await useNamespace('pre-dispatch');
  const LEAD = 400;
  const p = await startPipeline(ns, { delayTier: { preDispatchMs: LEAD } });
  const started = new Map<string, number>();
  const worker = p.worker();
  worker.handle('lead.check', (_payload, ctx) => void started.set(ctx.jobId, Date.now()));
  await worker.start();
  const now = Date.now();
  const results = await p.commands.createJobs(
    Array.from({ length: 20 }, (_, i) => ({
      tenant: 'acme',
      type: 'lead.check',
      resource_class: 'default',
      due_at: new Date(now + 6000 + i * 100).toISOString(), // well after its event reaches the tier
    })),
  );
  await eventually('all jobs to run', () => started.size === results.length, 30_000);
  const dispatched = new Map(p.dispatched.map((d) => [d.record.job_id, d.atMs]));
  let releasedEarly = 0;
  for (const r of results) {
    const due = r.job.dueAt.getTime();
    const at = dispatched.get(r.job.id);
    expect(at).toBeDefined();
    // Released at most LEAD before due (Redis time), and started not before due.
    expect(at!).toBeGreaterThanOrEqual(due - LEAD);
    if (at! < due) releasedEarly++;
    expect(started.get(r.job.id)).toBeGreaterThanOrEqual(due);
  }
  expect(releasedEarly).toBeGreaterThan(0);
});
