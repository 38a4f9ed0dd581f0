import { TransientError } from '@kairos/worker-sdk';
import { Registry } from 'prom-client';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

const OPEN_MS = 2500;
const RAMP_MS = 4000;

test('a failing dependency opens the breaker of its job type; on recovery it slowly starts again and closes; every job succeeds', async () => {
  const ns = await useNamespace('breaker');
  const p = await startPipeline(ns);
  const changes: { to: string; at: number }[] = [];
  const calls: number[] = [];
  let down = true;
  // The service's own registry: the worker's metrics are scraped from it.
  const registry = new Registry();
  const worker = p.worker({
    concurrency: 4,
    metrics: registry,
    breaker: {
      window: 10,
      minCalls: 5,
      failureRatio: 0.5,
      openMs: OPEN_MS,
      rampMs: RAMP_MS,
      initialShare: 0.1,
    },
    retryBudget: false,
    logger: {
      info: () => undefined,
      error: () => undefined,
      warn: (obj) => {
        const o = obj as { jobType?: string; to?: string };
        if (o.jobType === 'dep.call' && o.to) changes.push({ to: o.to, at: Date.now() });
      },
    },
  });
  worker.handle('dep.call', () => {
    calls.push(Date.now());
    if (down) throw new TransientError('dependency answered 503');
  });
  await worker.start();

  const jobs = await p.commands.createJobs(
    Array.from({ length: 30 }, () => ({
      tenant: 'acme',
      type: 'dep.call',
      resource_class: 'default',
      max_attempts: 20,
      retry: { base_ms: 100, cap_ms: 400, jitter_ms: 0 },
    })),
  );
  await eventually('the breaker to open', () => changes.some((c) => c.to === 'open'), 30_000);
  const openedAt = changes.find((c) => c.to === 'open')!.at;
  const metric = async (name: string, labels: string): Promise<number> => {
    const line = (await registry.metrics())
      .split('\n')
      .find((l) => l.startsWith(`${name}{`) && labels.split(',').every((x) => l.includes(x)));
    return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  expect(await metric('kairos_worker_breaker_state', 'job_type="dep.call"')).toBe(2);
  // The dependency recovers while the breaker is still open.
  await new Promise((r) => setTimeout(r, OPEN_MS / 2));
  down = false;
  await eventually('the breaker to close again', () => worker.breakerState('dep.call') === 'closed', 60_000);
  await eventually(
    'every job to succeed',
    async () => {
      const r = await p.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs WHERE state = 'SUCCEEDED'",
      );
      return r.rows[0]?.n === jobs.length;
    },
    60_000,
  );

  // The worker's metrics saw it all: failures by class, then successes; the breaker closed.
  expect(await metric('kairos_worker_handler_duration_seconds_count', 'outcome="transient"')).toBeGreaterThan(
    0,
  );
  expect(
    await metric('kairos_worker_handler_duration_seconds_count', 'outcome="succeeded"'),
  ).toBeGreaterThanOrEqual(jobs.length);
  expect(await metric('kairos_worker_breaker_state', 'job_type="dep.call"')).toBe(0);
  expect(await metric('kairos_worker_tasks_in_flight', 'worker_id=')).toBe(0);
  expect(await metric('kairos_worker_lease_renewal_failures_total', 'worker_id=')).toBe(0);

  // (A change is noticed when a task asks: 'closed' shows up only if one came after the ramp.)
  expect(changes.map((c) => c.to).slice(0, 2)).toEqual(['open', 'ramping']);
  // Open: no call reached the dependency (a call already running when it opened may end just after).
  const duringOpen = calls.filter((t) => t > openedAt + 100 && t < openedAt + OPEN_MS - 100);
  expect(duringOpen).toEqual([]);
  // Slow start: in the first second of the ramp only a share of what waited was let through.
  const rampAt = changes.find((c) => c.to === 'ramping')!.at;
  const firstSecond = calls.filter((t) => t >= rampAt && t < rampAt + 1000).length;
  const waiting = jobs.length; // at most this many were waiting
  expect(firstSecond).toBeLessThan(waiting);
});
