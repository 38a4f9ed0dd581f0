import { alertWebhook } from '@kairos/tracker';
import { PermanentError } from '@kairos/worker-sdk';
import { expect, test } from 'vitest';
import { receiver } from '../support/alerts.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';
import { api, createSchedule, type Problem, type ScheduleView } from '../support/schedules.js';

// The dead-man's switch of a schedule on the real pipeline: a schedule whose handler starts failing
// raises schedule_sla_missed (metric, webhook, its view) once a run misses its sla_ms, and a run
// that succeeds again clears it and moves last_success_at.

const SLA_MS = 2000;

/** The schedule's SLA alert and late-run counter as Prometheus scrapes them from the tracker. */
async function scrape(p: Pipeline, scheduleId: string): Promise<{ alert: number | null; late: number }> {
  const text = await p.tracker.metrics.text();
  const value = (re: RegExp) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : null;
  };
  return {
    alert: value(
      new RegExp(
        `^kairos_alert_active\\{alert="schedule_sla_missed",schedule="${scheduleId}"\\} (\\S+)$`,
        'm',
      ),
    ),
    late:
      value(
        new RegExp(`^kairos_schedule_runs_total\\{schedule="${scheduleId}",outcome="late"\\} (\\S+)$`, 'm'),
      ) ?? 0,
  };
}

const view = async (p: Pipeline, id: string) =>
  (await api<ScheduleView>(p, 'GET', `/v1/schedules/${id}`)).json;

test('a schedule whose handler fails past its sla_ms alerts; a success clears it', async () => {
  const ns = await useNamespace('schedules-sla');
  const hook = await receiver();
  ns.defer(() => hook.close());
  const p = await startPipeline(ns, { scheduleSla: { intervalMs: 100, notify: alertWebhook(hook.url) } });
  let failing = false;
  const worker = p.worker();
  worker.handle('sla.report', () => {
    if (failing) throw new PermanentError('the report service answers 500');
  });
  await worker.start();
  const s = await createSchedule(p, {
    tenant: 'acme',
    cron: '* * * * * *',
    time_zone: 'UTC',
    job: { type: 'sla.report', resource_class: 'default', max_attempts: 1 },
    sla_ms: SLA_MS,
  });
  expect(s).toMatchObject({ sla_ms: SLA_MS, health: 'unknown', last_success_at: null, late_runs: 0 });

  // Runs succeed: ok, with a last success (a cold namespace's first runs may be late: wait it out).
  await eventually(
    'the schedule to be ok',
    async () => {
      const v = await view(p, s.id);
      return v.health === 'ok' && v.last_success_at !== null && (await scrape(p, s.id)).alert !== 1;
    },
    90_000,
  );
  // The check has judged a run: it now wakes at each run's deadline (a new schedule's first runs
  // may wait for its longest pause).
  await eventually('a run judged', async () => {
    const { rows } = await p.pool.query(
      'SELECT 1 FROM schedule_health WHERE schedule_id = $1 AND sla_judged_until IS NOT NULL',
      [s.id],
    );
    return rows.length === 1;
  });

  // The handler starts failing: the first run that fails past its deadline alerts.
  failing = true;
  const failedFrom = Date.now();
  await eventually('schedule_sla_missed', async () => (await scrape(p, s.id)).alert === 1, 30_000);
  const alertedAt = Date.now();
  const { rows } = await p.pool.query<{ due_at: Date }>(
    `SELECT min(due_at) AS due_at FROM jobs WHERE schedule_id = $1 AND state = 'FAILED'`,
    [s.id],
  );
  const deadline = rows[0]!.due_at.getTime() + SLA_MS;
  console.log(
    `[schedules-sla] handler failing → alert in ${((alertedAt - failedFrom) / 1000).toFixed(2)} s ` +
      `(sla_ms ${SLA_MS}; ${alertedAt - deadline} ms after the first failed run's deadline)`,
  );
  expect(alertedAt - failedFrom).toBeLessThan(SLA_MS + 5000);
  const late = await view(p, s.id);
  expect(late).toMatchObject({ health: 'late' });
  expect(late.late_runs).toBeGreaterThanOrEqual(1);
  expect((await scrape(p, s.id)).late).toBeGreaterThanOrEqual(1);
  await eventually('the webhook to hear of it', () =>
    hook.alerts.some(
      (a) =>
        a.labels.alertname === 'schedule_sla_missed' &&
        a.labels.schedule === s.id &&
        a.labels.tenant === 'acme' &&
        a.endsAt === undefined,
    ),
  );

  // It succeeds again: the alert clears, last_success_at moves on.
  const lastSuccess = Date.parse(late.last_success_at as string);
  failing = false;
  const fixedAt = Date.now();
  await eventually('the alert to clear', async () => (await scrape(p, s.id)).alert === 0, 30_000);
  console.log(`[schedules-sla] handler fixed → cleared in ${((Date.now() - fixedAt) / 1000).toFixed(2)} s`);
  const ok = await view(p, s.id);
  expect(ok.health).toBe('ok');
  expect(Date.parse(ok.last_success_at as string)).toBeGreaterThan(lastSuccess);
  await eventually('the webhook to hear it resolved', () =>
    hook.alerts.some((a) => a.labels.schedule === s.id && typeof a.endsAt === 'string'),
  );
  await worker.stop();
}, 180_000);

test('a bad sla_ms is refused with its field named, and changes nothing', async () => {
  const ns = await useNamespace('schedules-sla-input');
  const p = await startPipeline(ns, { generator: false, scheduleSla: false });
  const spec = {
    tenant: 'acme',
    cron: '0 * * * *',
    time_zone: 'UTC',
    job: { type: 'sla.report', resource_class: 'default' },
  };
  for (const bad of [0, -1, 999, 1500.5, 604_800_001, '60000', true]) {
    const r = await api<Problem>(p, 'POST', '/v1/schedules', { ...spec, sla_ms: bad });
    expect(r.status, `sla_ms ${JSON.stringify(bad)}`).toBe(400);
    expect(r.json.errors?.map((e) => e.field)).toEqual(['sla_ms']);
  }
  const { rows } = await p.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules');
  expect(rows[0]!.n).toBe(0);

  // Set, changed and removed through updates; a bad one leaves the schedule as it was.
  const s = await createSchedule(p, spec);
  expect(s).not.toHaveProperty('sla_ms');
  expect(s.health).toBe('unknown');
  const patch = (body: unknown) =>
    api<ScheduleView>(p, 'PATCH', `/v1/schedules/${s.id}`, body, {
      'content-type': 'application/merge-patch+json',
    });
  const set = await patch({ sla_ms: 3_600_000 });
  expect(set.status).toBe(200);
  expect(set.json).toMatchObject({ sla_ms: 3_600_000, version: 2 });
  const refused = await api<Problem>(p, 'PATCH', `/v1/schedules/${s.id}`, { sla_ms: 10 });
  expect(refused.status).toBe(400);
  expect(refused.json.errors?.map((e) => e.field)).toEqual(['sla_ms']);
  expect(await view(p, s.id)).toMatchObject({ sla_ms: 3_600_000, version: 2 });
  const removed = await patch({ sla_ms: null });
  expect(removed.json.version).toBe(3);
  expect(removed.json).not.toHaveProperty('sla_ms');
}, 120_000);
