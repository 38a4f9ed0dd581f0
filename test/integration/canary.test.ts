import { CANARY_TENANT } from '@kairos/core';
import { alertWebhook } from '@kairos/tracker';
import { expect, test } from 'vitest';
import { receiver } from '../support/alerts.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

// The canary on the real pipeline: a job per class every period through Debezium, the delay tier
// and a worker; pausing the connector or stopping one class's workers raises canary_stalled
// (metric, log line, webhook) for exactly the classes affected, and it clears when they run again.

const INTERVAL_MS = 1000;
const STALL_MS = 6000;

/** The alerts and last successes as Prometheus scrapes them from the tracker. */
async function scrape(p: Pipeline): Promise<{ active: Set<string>; lastSuccess: Map<string, number> }> {
  const text = await p.tracker.metrics.text();
  const active = new Set<string>();
  for (const m of text.matchAll(
    /^kairos_alert_active\{alert="canary_stalled",resource_class="([^"]+)"\} 1$/gm,
  ))
    active.add(m[1]!);
  const lastSuccess = new Map<string, number>();
  for (const m of text.matchAll(
    /^kairos_canary_last_success_timestamp_seconds\{resource_class="([^"]+)"\} (\S+)$/gm,
  ))
    lastSuccess.set(m[1]!, Number(m[2]));
  return { active, lastSuccess };
}

/** The connector sends a heartbeat every 5 s: a healthy lag stays below this, s. */
const HEARTBEAT_LAG_S = 7;

async function outboxLag(p: Pipeline): Promise<number> {
  const m = /^kairos_outbox_lag_seconds (\S+)$/m.exec(await p.tracker.metrics.text());
  return m ? Number(m[1]) : Infinity;
}

async function connector(p: Pipeline, action: 'pause' | 'resume'): Promise<void> {
  const name = `${p.ns.prefix}outbox-${p.ns.id}`;
  const res = await fetch(`${p.ns.services.connectUrl}/connectors/${encodeURIComponent(name)}/${action}`, {
    method: 'PUT',
  });
  expect(res.status, `${action} ${name}`).toBe(202);
}

test('canaries flow; a paused connector alerts every class and clears on resume; a class without workers alerts alone', async () => {
  const ns = await useNamespace('canary');
  const hook = await receiver();
  ns.defer(() => hook.close());
  const p = await startPipeline(ns, {
    canary: {
      intervalMs: INTERVAL_MS,
      stallMs: STALL_MS,
      notify: alertWebhook(hook.url),
    },
    outboxHeartbeat: { retryMs: 500 },
  });
  const classes = ['critical', 'default', 'io'];
  const others = p.worker({ resourceClasses: ['critical', 'default'], groupId: `${ns.prefix}w-others` });
  const io = p.worker({ resourceClasses: ['io'], groupId: `${ns.prefix}w-io` });
  await Promise.all([others.start(), io.start()]);

  // Every class's canary succeeds, through Debezium: no alert.
  await eventually(
    'a canary of every class to succeed',
    async () => (await scrape(p)).lastSuccess.size === 3,
  );
  expect((await scrape(p)).active.size).toBe(0);
  // Never tenant work: their tenant is one no key can hold, and old ones are cleaned up.
  const { rows } = await p.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND type = 'kairos.canary'`,
    [CANARY_TENANT],
  );
  expect(rows[0]!.n).toBeGreaterThanOrEqual(3);
  // The connector's heartbeats (every 5 s) arrive: the outbox lag is known and small.
  await eventually(
    'the outbox lag to be known and small',
    async () => (await outboxLag(p)) < HEARTBEAT_LAG_S,
  );

  // Debezium stops carrying the outbox: every class alerts (the metric, then the webhook).
  await connector(p, 'pause');
  const paused = Date.now();
  await eventually('canary_stalled on every class', async () => (await scrape(p)).active.size === 3, 120_000);
  const toAlert = Date.now() - paused;
  console.log(`[canary] connector paused → alert on every class in ${(toAlert / 1000).toFixed(1)} s`);
  expect(toAlert).toBeLessThan(120_000);
  // Meanwhile no heartbeat got through: the outbox lag grew past a heartbeat interval.
  await eventually('the outbox lag to grow', async () => (await outboxLag(p)) > HEARTBEAT_LAG_S);
  console.log(`[canary] connector paused → outbox lag ${(await outboxLag(p)).toFixed(1)} s`);
  await eventually('the webhook to hear of it', () =>
    classes.every((rc) =>
      hook.alerts.some(
        (a) =>
          a.labels.resource_class === rc && a.labels.alertname === 'canary_stalled' && a.endsAt === undefined,
      ),
    ),
  );
  await connector(p, 'resume');
  const resumed = Date.now();
  await eventually('the alerts to clear', async () => (await scrape(p)).active.size === 0, 120_000);
  console.log(`[canary] connector resumed → cleared in ${((Date.now() - resumed) / 1000).toFixed(1)} s`);
  await eventually('the outbox lag to be small again', async () => (await outboxLag(p)) < HEARTBEAT_LAG_S);
  // The resolution is posted after the gauge clears: the webhook may hear it a moment later.
  await eventually('the webhook to hear it resolved', () =>
    hook.alerts.some((a) => typeof a.endsAt === 'string'),
  );

  // The io workers stop: io alerts, and only io, for as long as it stays down.
  await io.stop();
  const stopped = Date.now();
  await eventually('canary_stalled on io', async () => (await scrape(p)).active.has('io'), 120_000);
  console.log(`[canary] io workers stopped → io alert in ${((Date.now() - stopped) / 1000).toFixed(1)} s`);
  const before = (await scrape(p)).lastSuccess;
  await eventually('the other classes to succeed again meanwhile', async () => {
    const now = await scrape(p);
    return ['critical', 'default'].every((rc) => (now.lastSuccess.get(rc) ?? 0) > (before.get(rc) ?? 0));
  });
  expect([...(await scrape(p)).active]).toEqual(['io']);
  await others.stop();
}, 300_000);
