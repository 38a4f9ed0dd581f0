import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { api, createSchedule, Executions, runsOf, type Loose, type Problem } from '../support/schedules.js';

const MINUTE = 60_000;

test('backfill runs a past range once per occurrence, capped and at the configured rate', async () => {
  const ns = await useNamespace('schedules-backfill');
  const p = await startPipeline(ns, { schedules: { backfill: { maxCount: 50, ratePerSec: 5 } } });
  const ex = new Executions();
  const worker = p.worker();
  worker.handle('backfill.run', (_payload, ctx) => {
    ex.start(ctx.jobId, ctx.dueAt.getTime()).endedAt = Date.now();
  });
  await worker.start();
  const s = await createSchedule(p, {
    tenant: 'acme',
    cron: '* * * * *',
    time_zone: 'Europe/London',
    // Created now: its past never ran.
    job: { type: 'backfill.run', resource_class: 'io' },
    overlap: 'allow',
  });
  const hour = Math.floor(Date.now() / MINUTE) * MINUTE;
  const from = new Date(hour - 30 * MINUTE).toISOString();
  const to = new Date(hour - 10 * MINUTE).toISOString();

  // More occurrences than max_count: refused, nothing created.
  const capped = await api<Problem>(p, 'POST', `/v1/schedules/${s.id}/backfill`, { from, to, max_count: 10 });
  expect(capped.status).toBe(400);
  expect(capped.json.errors?.[0]?.field).toBe('to');
  const over = await api<Problem>(p, 'POST', `/v1/schedules/${s.id}/backfill`, { from, to, max_count: 51 });
  expect(over.json.errors?.[0]?.field).toBe('max_count');
  expect((await runsOf(p.pool, s.id)).filter((r) => r.kind === 'backfill')).toEqual([]);

  const first = await api<Loose>(p, 'POST', `/v1/schedules/${s.id}/backfill`, { from, to });
  expect(first.status).toBe(201);
  expect(first.json).toMatchObject({ requested: 20, created: 20, already_backfilled: 0, rate_per_sec: 5 });
  const backfills = async () => (await runsOf(p.pool, s.id)).filter((r) => r.kind === 'backfill');
  await eventually(
    'the backfill to run',
    async () => (await backfills()).every((r) => r.state === 'SUCCEEDED'),
    60_000,
  );

  const rows = await backfills();
  // One run per past minute, in order, standing for that minute.
  expect(rows.map((r) => r.occurrenceAt)).toEqual(
    Array.from({ length: 20 }, (_, i) => hour - 30 * MINUTE + i * MINUTE),
  );
  // Due 200 ms apart (5 per second), in the occurrences' order, never dispatched early.
  const due = rows.map((r) => r.dueAt);
  for (let i = 1; i < due.length; i++) expect(due[i]! - due[i - 1]!).toBe(200);
  for (const r of rows) expect(r.dispatchedAt!).toBeGreaterThanOrEqual(r.dueAt);
  const runs = ex.of(new Set(rows.map((r) => r.id))).sort((a, b) => a.startedAt - b.startedAt);
  expect(runs).toHaveLength(20);
  // At the rate: no more than 5 runs came due in any second.
  for (const r of runs)
    expect(runs.filter((x) => x.dueAt >= r.dueAt && x.dueAt < r.dueAt + 1000).length).toBeLessThanOrEqual(5);

  // Asking again for the same range runs nothing twice; an overlapping range runs only what is new,
  // after the earlier backfill's pace.
  const again = await api<Loose>(p, 'POST', `/v1/schedules/${s.id}/backfill`, { from, to });
  expect(again.status).toBe(200);
  expect(again.json).toMatchObject({ requested: 20, created: 0, already_backfilled: 20 });
  const wider = await api<Loose>(p, 'POST', `/v1/schedules/${s.id}/backfill`, {
    from: new Date(hour - 35 * MINUTE).toISOString(),
    to,
  });
  expect(wider.json).toMatchObject({ requested: 25, created: 5, already_backfilled: 20 });
  await eventually(
    'the wider backfill to run',
    async () => (await backfills()).every((r) => r.state === 'SUCCEEDED'),
    60_000,
  );
  expect(await backfills()).toHaveLength(25);
  expect(new Set((await backfills()).map((r) => r.occurrenceId)).size).toBe(25);
  // The regular schedule went on meanwhile, untouched.
  expect((await runsOf(p.pool, s.id)).filter((r) => r.kind === 'regular').length).toBeGreaterThanOrEqual(2);
}, 240_000);
