import type { JobCommands, ScheduleChange, ScheduleCommands, ScheduleContext } from '@kairos/commands';
import { isKairosError, KairosError, type Job, type Schedule } from '@kairos/core';
import type { Pool } from '@kairos/db';
import { silentLogger } from '@kairos/observability';
import type { ScheduleRequestRecord } from '@kairos/schemas';
import { describe, expect, test } from 'vitest';
import { RequestApplier, type Pending } from '../src/apply.js';
import type { IngestCommand } from '../src/request-commands.js';

const job = (id: string, state = 'SCHEDULED') =>
  ({ id, state, version: 1, dueAt: new Date(0) }) as unknown as Job;

/** Command handlers that record calls and fail as told. */
class FakeCommands {
  calls: string[] = [];
  failCancel: (() => Error | undefined) | undefined;
  limits = { maxBatch: 1000 };
  validate(requests: readonly unknown[]) {
    for (const r of requests) {
      if ((r as { type?: string }).type === 'bad') {
        throw new KairosError('VALIDATION', '1 invalid field(s)', {
          fields: [{ field: 'type', message: 'bad' }],
        });
      }
    }
  }
  createJobs(requests: readonly { idempotency_key: string }[]) {
    this.calls.push(`create ${requests.map((r) => r.idempotency_key).join(',')}`);
    return Promise.resolve(requests.map((r) => ({ job: job(`job-${r.idempotency_key}`), created: true })));
  }
  cancel(id: string) {
    this.calls.push(`cancel ${id}`);
    const failure = this.failCancel?.();
    if (failure) return Promise.reject(failure);
    return Promise.resolve({ job: job(id, 'CANCELLED'), applied: true });
  }
}

const schedule = (id: string, state = 'ACTIVE') => ({ id, state, version: 2 }) as unknown as Schedule;

/** Schedule handlers that record calls (in the job handlers' log, to see the order) and fail as told. */
class FakeSchedules {
  fail: (() => Error | undefined) | undefined;
  readonly ctxs: ScheduleContext[] = [];
  constructor(readonly calls: string[]) {}
  createSchedule(body: { idempotency_key: string }, ctx: ScheduleContext) {
    this.calls.push(`create schedule ${body.idempotency_key}`);
    this.ctxs.push(ctx);
    return Promise.resolve({ schedule: schedule(`s-${body.idempotency_key}`), created: false });
  }
  change(change: ScheduleChange, ctx: ScheduleContext) {
    this.calls.push(`${change.kind} ${change.id}`);
    this.ctxs.push(ctx);
    const failure = this.fail?.();
    if (failure) return Promise.reject(failure);
    const run = change.kind === 'trigger' ? job(`run-of-${change.id}`) : null;
    return Promise.resolve({ schedule: schedule(change.id), job: run, applied: ctx.requestKey !== 'seen' });
  }
}

function pending(command: IngestCommand, key: string): Pending {
  return {
    request: { request_id: `r-${key}`, tenant: 'acme', idempotency_key: key } as ScheduleRequestRecord,
    command,
    traceparent: null,
    failures: 0,
  };
}

const create = (key: string, type = 'ok') =>
  pending({ name: 'CreateJob', body: { type, idempotency_key: key } }, key);
const cancel = (key: string) => pending({ name: 'CancelJob', jobId: `id-${key}` }, key);

function applier(commands: FakeCommands, poolUp = true, schedules = new FakeSchedules(commands.calls)) {
  const pool = {
    query: () => (poolUp ? Promise.resolve({ rows: [] }) : Promise.reject(new Error('connect ECONNREFUSED'))),
  } as unknown as Pool;
  return new RequestApplier({
    commands: commands as unknown as JobCommands,
    schedules: schedules as unknown as ScheduleCommands,
    pool,
    maxCreatesPerTransaction: 2,
    internalErrorAttempts: 3,
    log: silentLogger(),
  });
}

describe('applying a batch', () => {
  test('in offset order: runs of creates (bounded) around each cancel; invalid creates rejected up front', async () => {
    const c = new FakeCommands();
    const batch = [create('a'), create('b', 'bad'), create('c'), create('d'), cancel('x'), create('e')];
    await applier(c).apply(batch);
    expect(c.calls).toEqual(['create a,c', 'create d', 'cancel id-x', 'create e']);
    expect(batch.map((p) => p.result?.kind)).toEqual([
      'accepted',
      'rejected',
      'accepted',
      'accepted',
      'accepted',
      'accepted',
    ]);
    expect(batch[1]!.result).toMatchObject({ rejection: { reason: 'INVALID_FIELD' } });
  });

  test('a transient failure is thrown; the retry resumes where it stopped and answers nothing twice', async () => {
    const c = new FakeCommands();
    let down = true;
    c.failCancel = () =>
      down ? Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) : undefined;
    const batch = [create('a'), cancel('x'), create('b')];
    const a = applier(c);
    await expect(a.apply(batch)).rejects.toThrow(/ECONNREFUSED/);
    expect(batch.map((p) => p.result?.kind)).toEqual(['accepted', undefined, undefined]);
    down = false;
    await a.apply(batch);
    expect(c.calls).toEqual(['create a', 'cancel id-x', 'cancel id-x', 'create b']);
    expect(batch.every((p) => p.result?.kind === 'accepted')).toBe(true);
  });

  test('a request failing unexpectedly while PostgreSQL answers is rejected INTERNAL_ERROR after a few tries', async () => {
    const c = new FakeCommands();
    c.failCancel = () => new TypeError('a bug');
    const batch = [cancel('x')];
    const a = applier(c);
    await expect(a.apply(batch)).rejects.toThrow(/a bug/);
    await expect(a.apply(batch)).rejects.toThrow(/a bug/);
    await a.apply(batch);
    expect(batch[0]!.result).toMatchObject({ kind: 'rejected', rejection: { reason: 'INTERNAL_ERROR' } });
  });

  test('…but while PostgreSQL does not answer it is an outage: never counted, never rejected', async () => {
    const c = new FakeCommands();
    c.failCancel = () => new TypeError('a bug');
    const batch = [cancel('x')];
    const a = applier(c, false);
    for (let i = 0; i < 5; i++) {
      const err: unknown = await a.apply(batch).catch((e: unknown) => e);
      expect(isKairosError(err, 'DEPENDENCY_UNAVAILABLE')).toBe(true);
    }
    expect(batch[0]!.result).toBeUndefined();
    expect(batch[0]!.failures).toBe(0);
  });

  test("a command error that is the request's fault is its rejection", async () => {
    const c = new FakeCommands();
    c.failCancel = () => new KairosError('CONFLICT', 'job is SUCCEEDED');
    const batch = [cancel('x')];
    await applier(c).apply(batch);
    expect(batch[0]!.result).toMatchObject({ kind: 'rejected', rejection: { reason: 'JOB_STATE_CONFLICT' } });
  });
});

describe('applying schedule commands', () => {
  const createSchedule = (key: string) =>
    pending({ name: 'CreateSchedule', body: { cron: '* * * * *', idempotency_key: key } }, key);
  const change = (name: 'PauseSchedule' | 'TriggerSchedule', kind: 'pause' | 'trigger', key: string) =>
    pending({ name, change: { kind, id: `sched-${key}` } }, key);

  test('each alone, in offset order between runs of job creates, scoped by tenant and request key', async () => {
    const c = new FakeCommands();
    const s = new FakeSchedules(c.calls);
    const batch = [
      create('a'),
      createSchedule('s'),
      create('b'),
      change('PauseSchedule', 'pause', 'p'),
      change('TriggerSchedule', 'trigger', 'seen'),
    ];
    await applier(c, true, s).apply(batch);
    expect(c.calls).toEqual([
      'create a',
      'create schedule s',
      'create b',
      'pause sched-p',
      'trigger sched-seen',
    ]);
    // A create's key is the schedule's own (in its body): no request key for it.
    expect(s.ctxs.map((x) => x.requestKey)).toEqual([undefined, 'p', 'seen']);
    expect(s.ctxs.every((x) => x.tenantId === 'acme')).toBe(true);
    expect(batch[1]!.result).toMatchObject({
      kind: 'accepted',
      job: null,
      schedule: { id: 's-s' },
      duplicate: true,
    });
    expect(batch[3]!.result).toMatchObject({ job: null, schedule: { id: 'sched-p' }, duplicate: false });
    // A trigger answers with its run; a repeated request key is a duplicate.
    expect(batch[4]!.result).toMatchObject({
      job: { id: 'run-of-sched-seen' },
      schedule: { id: 'sched-seen' },
      duplicate: true,
    });
  });

  test("the schedule handlers' errors are SCHEDULE_ reasons, naming schedule_id", async () => {
    const c = new FakeCommands();
    const s = new FakeSchedules(c.calls);
    const errors = [
      new KairosError('NOT_FOUND', 'no schedule'),
      new KairosError('CONFLICT', 'schedule is DELETED'),
      new KairosError('VALIDATION', 'bad', { fields: [{ field: 'id', message: 'not a UUID' }] }),
    ];
    s.fail = () => errors.shift();
    const batch = ['a', 'b', 'c'].map((k) => change('PauseSchedule', 'pause', k));
    await applier(c, true, s).apply(batch);
    expect(batch.map((p) => p.result)).toMatchObject([
      { kind: 'rejected', rejection: { reason: 'SCHEDULE_NOT_FOUND' } },
      { kind: 'rejected', rejection: { reason: 'SCHEDULE_STATE_CONFLICT' } },
      { kind: 'rejected', rejection: { reason: 'INVALID_FIELD', fields: [{ field: 'schedule_id' }] } },
    ]);
  });
});
