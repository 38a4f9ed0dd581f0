import type { ProcessDeployment, RunningApp } from '@kairos/ops';
import { expect, test } from 'vitest';
import {
  createJobsOverHttp,
  startDeployment,
  startWorkerProcess,
  waitAllSucceeded,
} from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

/** The target: a dead delay-tier owner or worker is replaced within this, by default. */
const FAILOVER_MS = 10_000;

/** Delay-tier instance id -> the partitions whose current epoch it took. */
async function owners(d: ProcessDeployment): Promise<Map<string, number[]>> {
  const { rows } = await d.pool.query<{ owner: string; partition: number }>(
    'SELECT owner, partition FROM partition_epochs ORDER BY partition',
  );
  const out = new Map<string, number[]>();
  for (const r of rows) out.set(r.owner, [...(out.get(r.owner) ?? []), r.partition]);
  return out;
}

test('a SIGKILLed delay-tier owner is replaced by the running standby within 10 s, nothing early or twice', async () => {
  const ns = await useNamespace('failover-tier');
  const d = await startDeployment(ns, {
    apps: ['api', 'tracker', 'delay-tier', 'delay-tier', 'worker-example'],
  });
  const tiers = d.apps('delay-tier');
  await eventually('both delay tiers own partitions', async () => {
    const o = await owners(d);
    return tiers.every((t) => (o.get(t.instanceId)?.length ?? 0) > 0) && [...o.values()].flat().length === 8;
  });
  const warm = await createJobsOverHttp(d, [
    { tenant: 'acme', type: 'demo.hello', resource_class: 'default', payload: { name: 'warm' } },
  ]);
  await waitAllSucceeded(
    d,
    warm.map((j) => j.id),
    90_000,
  );

  const victim = tiers[0] as RunningApp;
  const dueAt = Date.now() + 1500;
  const jobs = await createJobsOverHttp(
    d,
    Array.from({ length: 40 }, (_, i) => ({
      tenant: 'acme',
      type: 'demo.hello',
      resource_class: 'default',
      payload: { name: `j${i}` },
      due_at: new Date(dueAt).toISOString(),
    })),
  );
  const orphaned = new Set((await owners(d)).get(victim.instanceId));
  const killedAt = Date.now();
  await d.kill(victim, 'SIGKILL');
  await waitAllSucceeded(
    d,
    jobs.map((j) => j.id),
    60_000,
  );

  const { rows } = await d.pool.query<{ shard: number; due_at: Date; dispatched_at: Date; attempt: number }>(
    'SELECT shard, due_at, dispatched_at, attempt FROM jobs WHERE id = ANY($1::uuid[])',
    [jobs.map((j) => j.id)],
  );
  const taken = rows.filter((r) => orphaned.has(r.shard));
  expect(taken.length).toBeGreaterThan(0);
  for (const r of rows) {
    expect(r.dispatched_at.getTime()).toBeGreaterThanOrEqual(r.due_at.getTime()); // never early
    expect(r.attempt).toBe(1); // dispatched once, ran once
  }
  const latest = Math.max(...taken.map((r) => r.dispatched_at.getTime()));
  expect(latest - Math.max(killedAt, dueAt)).toBeLessThanOrEqual(FAILOVER_MS);
  const standby = tiers[1] as RunningApp;
  expect((await owners(d)).get(standby.instanceId)?.length).toBe(8);
}, 240_000);

test('the running tasks of a SIGKILLed worker start again on another worker within 10 s', async () => {
  const ns = await useNamespace('failover-worker');
  /** job id -> fence -> [worker app, time the START line arrived] */
  const starts = new Map<string, Map<number, [string, number]>>();
  const d = await startDeployment(ns, {
    onLine: (app, line) => {
      const [kind, job, fence] = line.split(' ');
      if (kind !== 'START' || !job) return;
      const perJob = starts.get(job) ?? new Map<number, [string, number]>();
      perJob.set(Number(fence), [app, Date.now()]);
      starts.set(job, perJob);
    },
  });
  const workers = [await startWorkerProcess(d, ns), await startWorkerProcess(d, ns)];
  const jobs = await createJobsOverHttp(
    d,
    Array.from({ length: 8 }, () => ({
      tenant: 'acme',
      type: 'lease.work',
      resource_class: 'default',
      payload: { ms: 15_000, retryMs: 50 },
    })),
  );
  await eventually('every job running', () => jobs.every((j) => starts.get(j.id)?.has(1)), 90_000);
  const onWorker = (w: RunningApp) => jobs.filter((j) => starts.get(j.id)?.get(1)?.[0] === w.name);
  const victim = [...workers].sort((a, b) => onWorker(b).length - onWorker(a).length)[0] as RunningApp;
  const orphaned = onWorker(victim);
  const killedAt = Date.now();
  await d.kill(victim, 'SIGKILL');

  await eventually('the dead worker’s tasks started again', () =>
    orphaned.every((j) => starts.get(j.id)?.has(2)),
  );
  for (const j of orphaned) {
    const [app, at] = starts.get(j.id)?.get(2) ?? ['', Infinity];
    expect(app).not.toBe(victim.name);
    expect(at - killedAt).toBeLessThanOrEqual(FAILOVER_MS);
  }
  await waitAllSucceeded(
    d,
    jobs.map((j) => j.id),
    60_000,
  );
}, 240_000);
