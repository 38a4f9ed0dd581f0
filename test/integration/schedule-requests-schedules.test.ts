import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import type { RequestOutcome, SentRequest } from '@kairos/client';
import { useNamespace } from '../support/namespace.js';
import { collectAnswers, startClient, startIngest } from '../support/ingest.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { Executions, runsOf, sleep } from '../support/schedules.js';

type Accepted = Extract<RequestOutcome, { status: 'accepted' }>;
type Rejected = Extract<RequestOutcome, { status: 'rejected' }>;

test('schedules through schedule-requests: create, run, pause, trigger, resume, update, delete; repeats change nothing; bad ones are rejected once', async () => {
  const ns = await useNamespace('schedule-requests-schedules');
  const p = await startPipeline(ns);
  const { registry, fatal } = await startIngest(ns, { pipeline: p });
  const answers = await collectAnswers(ns, registry);
  const ex = new Executions();
  const types = new Map<string, string>();
  const worker = p.worker();
  for (const type of ['sreq.tick', 'sreq.tock']) {
    worker.handle(type, (_payload, ctx) => {
      types.set(ctx.jobId, type);
      ex.start(ctx.jobId, ctx.dueAt.getTime()).endedAt = Date.now();
    });
  }
  await worker.start();
  const c = startClient(ns, { outcomeTimeoutMs: 60_000 });
  await c.start();

  const outcome = async (sent: Promise<SentRequest>) => c.awaitOutcome(await sent);
  const accepted = async (sent: Promise<SentRequest>): Promise<Accepted> => {
    const o = await outcome(sent);
    if (o.status !== 'accepted') throw new Error(`rejected: ${o.reason}: ${o.message}`);
    return o;
  };
  const rejected = async (sent: Promise<SentRequest>): Promise<Rejected> => {
    const o = await outcome(sent);
    if (o.status !== 'rejected') throw new Error(`expected a rejection, got ${JSON.stringify(o)}`);
    return o;
  };
  const schedules = async () =>
    (await p.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules')).rows[0]!.n;
  const every = {
    cron: '* * * * * *',
    timeZone: 'Europe/Paris',
    job: { type: 'sreq.tick', resourceClass: 'default', payload: { n: 1 } },
  };

  // Create, every second: it runs.
  const created = await accepted(c.createSchedule({ ...every, idempotencyKey: 'ticker' }));
  expect(created).toMatchObject({
    command: 'CreateSchedule',
    jobId: '',
    state: 'ACTIVE',
    version: 1,
    duplicate: false,
  });
  const id = created.scheduleId!;
  expect(created.nextFireAt!.getTime()).toBeGreaterThan(Date.now() - 2000);
  const schedule = await p.schedules.getSchedule(id);
  expect(schedule).toMatchObject({ tenantId: 'acme', idempotencyKey: 'ticker', timeZone: 'Europe/Paris' });
  const ranOf = async () => {
    const ran = new Set(ex.all.map((e) => e.jobId));
    return (await runsOf(p.pool, id)).filter((r) => ran.has(r.id));
  };
  await eventually('three runs', async () => (await ranOf()).length >= 3, 45_000);

  // The same create again (a retry, or the request delivered twice): the first schedule, nothing new.
  const again = await accepted(c.createSchedule({ ...every, idempotencyKey: 'ticker' }));
  expect(again).toMatchObject({ scheduleId: id, duplicate: true, state: 'ACTIVE' });
  expect(await schedules()).toBe(1);

  // Invalid schedules: exactly one rejection each, with the reason and the field; nothing created.
  const badCron = c.createSchedule({ ...every, cron: '61 * * * *', idempotencyKey: 'bad-cron' });
  const badZone = c.createSchedule({ ...every, timeZone: 'Mars/Olympus_Mons', idempotencyKey: 'bad-zone' });
  expect(await rejected(badCron)).toMatchObject({ reason: 'INVALID_FIELD', fields: [{ field: 'cron' }] });
  expect(await rejected(badZone)).toMatchObject({
    reason: 'INVALID_FIELD',
    fields: [{ field: 'time_zone' }],
  });
  expect((await rejected(c.pauseSchedule({ scheduleId: randomUUID() }))).reason).toBe('SCHEDULE_NOT_FOUND');
  // Another tenant's schedule does not exist for globex.
  const foreign = await rejected(c.pauseSchedule({ scheduleId: id, tenant: 'globex' }));
  expect(foreign.reason).toBe('SCHEDULE_NOT_FOUND');
  expect(await schedules()).toBe(1);

  // Pause: the runs ahead are cancelled and nothing regular runs; the same key again changes nothing.
  const paused = await accepted(c.pauseSchedule({ scheduleId: id, idempotencyKey: 'pause-1' }));
  expect(paused).toMatchObject({ state: 'PAUSED', version: 2, duplicate: false, nextFireAt: null });
  const pausedAt = (await p.schedules.getSchedule(id)).pausedAt!.getTime();
  const repeat = await accepted(c.pauseSchedule({ scheduleId: id, idempotencyKey: 'pause-1' }));
  expect(repeat).toMatchObject({ state: 'PAUSED', version: 2, duplicate: true });

  // Trigger while paused: one extra run, once per key.
  const triggered = await accepted(c.triggerSchedule({ scheduleId: id, idempotencyKey: 'manual-1' }));
  expect(triggered).toMatchObject({ scheduleId: id, state: 'SCHEDULED', duplicate: false });
  const twice = await accepted(c.triggerSchedule({ scheduleId: id, idempotencyKey: 'manual-1' }));
  expect(twice).toMatchObject({ jobId: triggered.jobId, duplicate: true });
  await eventually('the triggered run', () => ex.all.some((e) => e.jobId === triggered.jobId), 20_000);
  await sleep(2000);
  const whilePaused = (await runsOf(p.pool, id)).filter((r) => r.kind === 'regular' && r.dueAt > pausedAt);
  expect(whilePaused.every((r) => r.state === 'CANCELLED')).toBe(true);
  expect(ex.of(new Set(whilePaused.map((r) => r.id)))).toEqual([]);
  const triggers = (await runsOf(p.pool, id)).filter((r) => r.kind === 'trigger');
  expect(triggers.map((r) => r.id)).toEqual([triggered.jobId]);
  expect(ex.of(new Set([triggered.jobId]))).toHaveLength(1);

  // Resume: it runs again. The pause key delivered once more still changes nothing.
  const resumed = await accepted(c.resumeSchedule({ scheduleId: id, idempotencyKey: 'resume-1' }));
  expect(resumed).toMatchObject({ state: 'ACTIVE', version: 3, duplicate: false });
  expect(resumed.nextFireAt).not.toBeNull();
  const resumedAt = (await p.schedules.getSchedule(id)).updatedAt.getTime();
  const late = await accepted(c.pauseSchedule({ scheduleId: id, idempotencyKey: 'pause-1' }));
  expect(late).toMatchObject({ state: 'ACTIVE', version: 3, duplicate: true });
  await eventually(
    'two runs after the resume',
    async () => (await ranOf()).filter((r) => r.kind === 'regular' && r.occurrenceAt > resumedAt).length >= 2,
    20_000,
  );

  // Update: a stale expected version is refused; the right one makes version 4, whose runs are the new job.
  const tock = {
    ...every,
    job: { type: 'sreq.tock', resourceClass: 'io', payload: { n: 2 } },
    slaMs: 60_000,
  };
  const stale = await rejected(c.updateSchedule({ ...tock, scheduleId: id, expectedVersion: 1 }));
  expect(stale.reason).toBe('SCHEDULE_STATE_CONFLICT');
  const updated = await accepted(c.updateSchedule({ ...tock, scheduleId: id, expectedVersion: 3 }));
  expect(updated).toMatchObject({ state: 'ACTIVE', version: 4, duplicate: false });
  const v4 = await p.schedules.getSchedule(id);
  const updatedAt = v4.updatedAt.getTime();
  // sla_ms, added to the request schema later (optional, default null), reaches the schedule.
  expect(v4.slaMs).toBe(60_000);
  await eventually('a run of the new version', () => [...types.values()].includes('sreq.tock'), 20_000);
  const ticksAfter = (await runsOf(p.pool, id)).filter(
    (r) => r.kind === 'regular' && r.dueAt > updatedAt && types.get(r.id) === 'sreq.tick',
  );
  expect(ticksAfter).toEqual([]);

  // Delete: DELETED, nothing runs any more, and it cannot be triggered.
  const deleted = await accepted(c.deleteSchedule({ scheduleId: id }));
  expect(deleted).toMatchObject({ state: 'DELETED', version: 5, nextFireAt: null });
  const deletedAt = (await p.schedules.getSchedule(id)).deletedAt!.getTime();
  expect((await rejected(c.triggerSchedule({ scheduleId: id }))).reason).toBe('SCHEDULE_STATE_CONFLICT');
  await sleep(2000);
  const afterDelete = (await runsOf(p.pool, id)).filter((r) => r.dueAt > deletedAt);
  expect(afterDelete.every((r) => r.state === 'CANCELLED')).toBe(true);
  expect(ex.of(new Set(afterDelete.map((r) => r.id)))).toEqual([]);

  // Every request was answered exactly once: the invalid ones by one rejection and no outcome.
  await eventually('the answers to be read', () => answers.outcomes.length + answers.rejections.length >= 16);
  for (const sent of [await badCron, await badZone]) {
    expect(answers.rejections.filter((r) => r.record.request_id === sent.requestId)).toHaveLength(1);
    expect(answers.outcomes.filter((o) => o.request_id === sent.requestId)).toEqual([]);
  }
  const ids = [
    ...answers.outcomes.map((o) => o.request_id),
    ...answers.rejections.map((r) => r.record.request_id),
  ];
  expect(new Set(ids).size).toBe(ids.length);
  expect(answers.outcomes.find((o) => o.request_id === triggered.requestId)).toMatchObject({
    command: 'TriggerSchedule',
    schedule_id: id,
    job_id: triggered.jobId,
  });
  expect(fatal).toEqual([]);
}, 120_000);
