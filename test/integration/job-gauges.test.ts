import { PermanentError } from '@kairos/worker-sdk';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { sumOf } from '../support/prom-text.js';

// The tracker's gauges on the real pipeline: the load forecast sees 10,000 jobs created for a
// minute ahead before they are due; jobs by state, dead letters, per-hop lag, consumer lag and
// the oldest overdue job are scraped and move as work flows.

const N = 10_000;

test('the forecast shows 10,000 jobs due in a minute before they are due; the job gauges and hop lags move', async () => {
  const ns = await useNamespace('gauges');
  const p = await startPipeline(ns, { gauges: { intervalMs: 300 }, outboxHeartbeat: {} });
  const t0 = Date.now();
  const firstDue = t0 + 65_000;
  for (let i = 0; i < N; i += 1000) {
    await p.commands.createJobs(
      Array.from({ length: 1000 }, (_, k) => ({
        tenant: `t${k % 7}`,
        type: 'forecast.check',
        resource_class: 'io',
        payload: {},
        due_at: new Date(firstDue + ((i + k) % 5000)).toISOString(),
      })),
    );
  }
  const created = Date.now();
  let seenAt = 0;
  await eventually('the forecast to show every job', async () => {
    const text = await p.tracker.metrics.text();
    const ok =
      sumOf(text, 'kairos_jobs_due', { resource_class: 'io', window: '5m' }) === N &&
      sumOf(text, 'kairos_jobs_due', { resource_class: 'io', window: '1h' }) === N &&
      sumOf(text, 'kairos_jobs', { resource_class: 'io', state: 'SCHEDULED' }) === N;
    if (ok) seenAt = Date.now();
    return ok;
  });
  expect(seenAt).toBeLessThan(firstDue);
  console.log(
    `[gauges] ${N} jobs created in ${created - t0} ms; in the forecast ${seenAt - created} ms after, ${firstDue - seenAt} ms before the first is due`,
  );

  // Work flows: one success and one dead letter in `default`; every hop is observed.
  const worker = p.worker({ resourceClasses: ['default'] });
  worker.handle('gauge.ok', () => undefined);
  worker.handle('gauge.fail', () => {
    throw new PermanentError('refused for good');
  });
  await worker.start();
  const now = new Date().toISOString();
  await p.commands.createJobs([
    { tenant: 'acme', type: 'gauge.ok', resource_class: 'default', payload: {}, due_at: now },
    {
      tenant: 'acme',
      type: 'gauge.fail',
      resource_class: 'default',
      payload: {},
      due_at: now,
      max_attempts: 1,
    },
  ]);
  await eventually('a dead letter and every hop to show', async () => {
    const tracker = await p.tracker.metrics.text();
    const tier = await p.delayTier.metrics.text();
    const hops = (text: string, hop: string) =>
      sumOf(text, 'kairos_hop_lag_seconds_count', { hop, resource_class: 'default' });
    return (
      sumOf(tracker, 'kairos_dead_letters', { resource_class: 'default' }) === 1 &&
      ['outbox_to_kafka', 'kafka_to_hot_set', 'due_to_dispatch'].every((h) => hops(tier, h) >= 2) &&
      ['dispatch_to_start', 'start_to_finish', 'finish_to_recorded'].every((h) => hops(tracker, h) >= 2) &&
      sumOf(tracker, 'kairos_outbox_lag_seconds') < 10 &&
      tracker.includes(`kairos_consumer_lag_messages{group="${ns.prefix}tracker"`)
    );
  });

  // With the delay tier stopped, a job due a minute ago stays SCHEDULED: the oldest overdue shows it.
  await p.delayTier.stop();
  await p.commands.createJobs([
    {
      tenant: 'acme',
      type: 'gauge.ok',
      resource_class: 'critical',
      payload: {},
      due_at: new Date(Date.now() - 60_000).toISOString(),
    },
  ]);
  await eventually('the oldest overdue job to show', async () => {
    const text = await p.tracker.metrics.text();
    return sumOf(text, 'kairos_oldest_overdue_seconds', { resource_class: 'critical' }) >= 60;
  });
});
