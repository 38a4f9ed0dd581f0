import { expect, test } from 'vitest';
import { TransientError } from '@kairos/worker-sdk';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import {
  api,
  createSchedule,
  Executions,
  nextSecond,
  runsOf,
  sleep,
  type RunView,
  type ScheduleView,
} from '../support/schedules.js';

test('a schedule firing every second runs 20 times in 20 s: each occurrence once, none early', async () => {
  const ns = await useNamespace('schedules-every-second');
  const p = await startPipeline(ns);
  const ex = new Executions();
  const worker = p.worker();
  worker.handle('sched.tick', (_payload, ctx) => {
    ex.start(ctx.jobId, ctx.dueAt.getTime()).endedAt = Date.now();
  });
  await worker.start();
  const s = await createSchedule(p, {
    tenant: 'acme',
    cron: '* * * * * *',
    time_zone: 'Europe/Paris',
    job: { type: 'sched.tick', resource_class: 'default', payload: { n: 1 } },
  });
  // The namespace's connector starts cold: measure once the pipeline runs.
  await eventually('the first run', () => ex.all.length > 0, 90_000);
  const from = nextSecond(Date.now()) + 1000;
  const to = from + 20_000;
  await sleep(to - Date.now());
  const inWindow = async () =>
    (await runsOf(p.pool, s.id)).filter((r) => r.occurrenceAt >= from && r.occurrenceAt < to);
  await eventually(
    'the window to be run',
    async () => (await inWindow()).every((r) => r.state === 'SUCCEEDED'),
    30_000,
  );
  const rows = await inWindow();

  // 20 occurrences, one per second, each once, all succeeded.
  expect(rows.map((r) => r.occurrenceAt)).toEqual(Array.from({ length: 20 }, (_, i) => from + i * 1000));
  expect(new Set(rows.map((r) => r.occurrenceId)).size).toBe(20);
  expect(rows.every((r) => r.kind === 'regular' && r.attempt === 1)).toBe(true);
  // Each ran exactly once in the worker, never before its time, promptly.
  const ids = new Set(rows.map((r) => r.id));
  const runs = ex.of(ids);
  expect(runs).toHaveLength(20);
  expect(new Set(runs.map((e) => e.jobId)).size).toBe(20);
  for (const e of runs) {
    expect(e.startedAt).toBeGreaterThanOrEqual(e.dueAt);
    expect(e.startedAt - e.dueAt).toBeLessThan(2000);
  }
  for (const r of rows) expect(r.dispatchedAt! - r.dueAt).toBeLessThan(1000);
  // Nothing outside the window ran twice either.
  const all = await runsOf(p.pool, s.id);
  expect(new Set(all.map((r) => r.occurrenceId)).size).toBe(all.length);
  expect(new Set(ex.all.map((e) => e.jobId)).size).toBe(ex.all.length);
}, 240_000);

test('pause stops the runs, trigger-now runs once while paused, resume continues from the resume', async () => {
  const ns = await useNamespace('schedules-pause');
  const p = await startPipeline(ns);
  const ex = new Executions();
  const worker = p.worker();
  worker.handle('sched.pause', (_payload, ctx) => {
    ex.start(ctx.jobId, ctx.dueAt.getTime()).endedAt = Date.now();
  });
  await worker.start();
  const s = await createSchedule(p, {
    tenant: 'acme',
    cron: '* * * * * *',
    time_zone: 'UTC',
    job: { type: 'sched.pause', resource_class: 'io' },
  });
  await eventually('three runs', () => ex.all.length >= 3, 90_000);

  const paused = await api<ScheduleView>(p, 'POST', `/v1/schedules/${s.id}/pause`);
  const pausedAt = Date.parse(paused.json.paused_at ?? '');
  expect(paused.json).toMatchObject({ state: 'PAUSED', version: 2 });
  const dueAfterPause = (runs: Awaited<ReturnType<typeof runsOf>>) =>
    runs.filter((r) => r.kind === 'regular' && r.dueAt > pausedAt);
  // The runs generated ahead were cancelled: none of them runs.
  const cancelled = dueAfterPause(await runsOf(p.pool, s.id));
  expect(cancelled.length).toBeGreaterThanOrEqual(2);
  expect(cancelled.every((r) => r.state === 'CANCELLED' && r.lastError === 'the schedule was paused')).toBe(
    true,
  );

  // Trigger now while paused: one extra run with its own occurrence, once per idempotency key.
  const t1 = await api<RunView>(p, 'POST', `/v1/schedules/${s.id}/trigger`, { idempotency_key: 'manual-1' });
  expect(t1.status).toBe(201);
  expect(t1.json).toMatchObject({ schedule_id: s.id, occurrence: { kind: 'trigger' }, state: 'SCHEDULED' });
  const t2 = await api<RunView>(p, 'POST', `/v1/schedules/${s.id}/trigger`, { idempotency_key: 'manual-1' });
  expect(t2.status).toBe(200);
  expect(t2.json.id).toBe(t1.json.id);
  await eventually('the triggered run', () => ex.all.some((e) => e.jobId === t1.json.id), 30_000);
  expect(ex.all.filter((e) => e.jobId === t1.json.id)).toHaveLength(1);
  const t1Run = (await runsOf(p.pool, s.id)).find((r) => r.id === t1.json.id)!;
  expect(t1Run.occurrenceId).toBe(t1.json.occurrence?.id);
  expect(t1Run.occurrenceAt).toBeGreaterThan(pausedAt);

  await sleep(3000);
  // Nothing regular due after the pause ran.
  const regularIds = new Set(dueAfterPause(await runsOf(p.pool, s.id)).map((r) => r.id));
  expect(ex.of(regularIds)).toEqual([]);

  const resumed = await api<ScheduleView>(p, 'POST', `/v1/schedules/${s.id}/resume`);
  const resumedAt = Date.parse(resumed.json.updated_at);
  expect(resumed.json).toMatchObject({ state: 'ACTIVE', version: 3, paused_at: null });
  await eventually(
    'three runs after the resume',
    () => ex.all.filter((e) => e.dueAt > resumedAt).length >= 3,
    30_000,
  );

  const rows = await runsOf(p.pool, s.id);
  const ran = new Set(ex.all.map((e) => e.jobId));
  const ranRows = rows.filter((r) => ran.has(r.id));
  // Between the pause and the resume only the triggered run ran; what came due while paused was
  // not caught up (resume without catch_up).
  expect(
    ranRows.filter((r) => r.occurrenceAt > pausedAt && r.occurrenceAt <= resumedAt).map((r) => r.kind),
  ).toEqual(['trigger']);
  const after = ranRows.filter((r) => r.kind === 'regular' && r.occurrenceAt > resumedAt);
  expect(after.length).toBeGreaterThanOrEqual(3);
  // The first regular occurrence after the resume is the next whole second.
  expect(after[0]!.occurrenceAt).toBe(nextSecond(resumedAt - 1));
  // Each occurrence once (a run cancelled by the pause is generated again after the resume, as a
  // new job of the same occurrence), each job run once.
  const live = rows.filter((r) => r.state !== 'CANCELLED');
  expect(new Set(live.map((r) => r.occurrenceId)).size).toBe(live.length);
  expect(ran.size).toBe(ex.all.length);
}, 240_000);

test('a run that fails is retried after its backoff, even past the misfire tolerance', async () => {
  const ns = await useNamespace('schedules-retry');
  const p = await startPipeline(ns, { schedules: { misfireToleranceMs: 1000 } });
  const attempts = new Map<string, number[]>();
  const worker = p.worker();
  worker.handle('sched.flaky', (_payload, ctx) => {
    attempts.set(ctx.jobId, [...(attempts.get(ctx.jobId) ?? []), ctx.attempt]);
    if (ctx.attempt === 1) throw new TransientError('first attempt fails');
  });
  await worker.start();
  const s = await createSchedule(p, {
    tenant: 'acme',
    cron: '*/5 * * * * *',
    time_zone: 'UTC',
    job: { type: 'sched.flaky', resource_class: 'default', retry: { base_ms: 2500, jitter_ms: 0 } },
  });
  await eventually('a first run to fail', () => [...attempts.values()].some((a) => a.length >= 1), 90_000);
  const [jobId] = [...attempts.keys()];
  // The retry is due 2.5 s after the failure, later than the occurrence's tolerance (1 s): it is
  // the same run going on, not a misfire, so it is dispatched.
  await eventually(
    'the retry to succeed',
    async () => (await runsOf(p.pool, s.id)).some((r) => r.id === jobId && r.state === 'SUCCEEDED'),
    30_000,
  );
  expect(attempts.get(jobId!)).toEqual([1, 2]);
  const row = (await runsOf(p.pool, s.id)).find((r) => r.id === jobId)!;
  expect(row).toMatchObject({ attempt: 2, kind: 'regular', lastError: 'first attempt fails' });
}, 240_000);
