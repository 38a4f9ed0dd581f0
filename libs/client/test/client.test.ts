import { describe, expect, test } from 'vitest';
import { KairosClient } from '@kairos/client';
import { SCHEMAS } from '@kairos/schemas';
import avro from 'avsc';
import { commandBranch, createJobRecord, rescheduleJobRecord } from '../src/requests.js';
import {
  createScheduleRecord,
  resumeScheduleRecord,
  updateScheduleRecord,
} from '../src/schedule-requests.js';

const base = { brokers: ['127.0.0.1:9092'], registryUrl: 'http://127.0.0.1:8081' };

describe('client options', () => {
  test.each([
    [{ ...base, brokers: [] }, /brokers/],
    [{ ...base, registryUrl: 'nope' }, /registryUrl/],
    [{ ...base, tenant: '' }, /tenant/],
    [{ ...base, outcomeTimeoutMs: 0 }, /outcomeTimeoutMs/],
  ])('rejects %j', (options, message) => {
    expect(() => new KairosClient(options)).toThrow(message);
  });

  test('awaitOutcome needs outcomes: true', () => {
    expect(() => new KairosClient(base).awaitOutcome('r')).toThrow(/outcomes: true/);
  });

  test('sending before start() is refused', async () => {
    await expect(
      new KairosClient({ ...base, tenant: 'acme' }).schedule({ type: 't', resourceClass: 'io' }),
    ).rejects.toThrow(/start\(\)/);
  });
});

describe('request records', () => {
  const type = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
  const envelope = { request_id: 'r', tenant: 'acme', idempotency_key: 'k' };

  test('a create maps every field and encodes with the schema', () => {
    const record = createJobRecord({
      type: 'email.send',
      resourceClass: 'io',
      payload: { to: 'a@example.com' },
      dueAt: '2026-12-01T09:00:00+01:00',
      deadlineAt: new Date('2026-12-01T09:00:00Z'),
      maxAttempts: 5,
      retry: { baseMs: 2000 },
    });
    expect(record).toEqual({
      type: 'email.send',
      resource_class: 'io',
      payload: '{"to":"a@example.com"}',
      due_at: Date.parse('2026-12-01T08:00:00Z'),
      delay_ms: null,
      deadline_at: Date.parse('2026-12-01T09:00:00Z'),
      max_attempts: 5,
      retry: { base_ms: 2000, cap_ms: null, jitter_ms: null },
    });
    const value = { ...envelope, command: commandBranch('CreateJob', record) };
    expect(type.isValid(value)).toBe(true);
    expect(type.fromBuffer(type.toBuffer(value))).toMatchObject(value);
  });

  test('a reschedule: null deadline clears it, absent keeps it', () => {
    expect(rescheduleJobRecord({ jobId: 'j', delayMs: 10, deadlineAt: null })).toEqual({
      job_id: 'j',
      due_at: null,
      delay_ms: 10,
      deadline_at: null,
      clear_deadline: true,
    });
    expect(rescheduleJobRecord({ jobId: 'j', dueAt: 5 }).clear_deadline).toBe(false);
    const value = {
      ...envelope,
      command: commandBranch('RescheduleJob', rescheduleJobRecord({ jobId: 'j', dueAt: 5 })),
    };
    expect(type.isValid(value)).toBe(true);
  });

  test('an unparseable time or an unserializable payload is a RangeError naming the field', () => {
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', dueAt: 'tomorrow' })).toThrow(/dueAt/);
    // Past the largest JavaScript date, or before 1970: refused here, not by a process downstream.
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', dueAt: 9e15 })).toThrow(
      /dueAt must be a time between 1970 and 9999/,
    );
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', deadlineAt: -1 })).toThrow(/deadlineAt/);
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', payload: () => 1 })).toThrow(/payload/);
  });
});

describe('schedule request records', () => {
  const type = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
  const envelope = { request_id: 'r', tenant: 'acme', idempotency_key: 'k' };
  const valid = (command: ReturnType<typeof commandBranch>) => type.isValid({ ...envelope, command });

  test('a create maps every field of POST /v1/schedules and encodes with the schema', () => {
    const record = createScheduleRecord({
      cron: '30 2 * * *',
      timeZone: 'America/New_York',
      startAt: '2026-03-01T00:00:00-05:00',
      endAt: new Date('2027-03-01T05:00:00Z'),
      job: {
        type: 'report.sales',
        resourceClass: 'default',
        payload: { region: 'us' },
        maxAttempts: 3,
        retry: { baseMs: 60_000 },
        deadlineMs: 3_600_000,
      },
      dst: { gap: 'shift', overlap: 'first' },
      misfire: { kind: 'within', windowMs: 600_000 },
      overlap: 'skip',
      jitterMs: 0,
      slaMs: 7_200_000,
    });
    expect(record).toEqual({
      cron: '30 2 * * *',
      time_zone: 'America/New_York',
      start_at: Date.parse('2026-03-01T05:00:00Z'),
      end_at: Date.parse('2027-03-01T05:00:00Z'),
      job: {
        type: 'report.sales',
        resource_class: 'default',
        payload: '{"region":"us"}',
        max_attempts: 3,
        retry: { base_ms: 60_000, cap_ms: null, jitter_ms: null },
        deadline_ms: 3_600_000,
      },
      dst: { gap: 'shift', overlap: 'first' },
      misfire: { kind: 'within', max_count: null, window_ms: 600_000 },
      overlap: 'skip',
      jitter_ms: 0,
      sla_ms: 7_200_000,
    });
    const value = { ...envelope, command: commandBranch('CreateSchedule', record) };
    expect(type.isValid(value)).toBe(true);
    expect(type.fromBuffer(type.toBuffer(value))).toMatchObject(value);
  });

  test('what is left out is null (the defaults apply); misfire counts map by kind', () => {
    const minimal = { cron: '* * * * * *', timeZone: 'UTC', job: { type: 't', resourceClass: 'io' } };
    expect(createScheduleRecord(minimal)).toMatchObject({
      start_at: null,
      end_at: null,
      job: { payload: '{}', max_attempts: null, retry: null, deadline_ms: null },
      dst: null,
      misfire: null,
      overlap: null,
      jitter_ms: null,
      sla_ms: null,
    });
    expect(createScheduleRecord({ ...minimal, misfire: { kind: 'fire_all', maxCount: 5 } }).misfire).toEqual({
      kind: 'fire_all',
      max_count: 5,
      window_ms: null,
    });
  });

  test('update, pause, resume, delete and trigger name their schedule', () => {
    const update = updateScheduleRecord({
      scheduleId: 's',
      expectedVersion: 4,
      cron: '0 3 * * *',
      timeZone: 'UTC',
      job: { type: 't', resourceClass: 'io' },
    });
    expect(update).toMatchObject({ schedule_id: 's', expected_version: 4, cron: '0 3 * * *' });
    expect(valid(commandBranch('UpdateSchedule', update))).toBe(true);
    expect(resumeScheduleRecord({ scheduleId: 's' })).toEqual({ schedule_id: 's', catch_up: false });
    expect(
      valid(commandBranch('ResumeSchedule', resumeScheduleRecord({ scheduleId: 's', catchUp: true }))),
    ).toBe(true);
    for (const name of ['PauseSchedule', 'DeleteSchedule', 'TriggerSchedule'] as const) {
      expect(valid(commandBranch(name, { schedule_id: 's' }))).toBe(true);
    }
  });

  test('an unparseable time or an unserializable payload is a RangeError naming the field', () => {
    const job = { type: 't', resourceClass: 'io' };
    expect(() => createScheduleRecord({ cron: '* * * * *', timeZone: 'UTC', job, startAt: 'soon' })).toThrow(
      /startAt/,
    );
    expect(() =>
      createScheduleRecord({ cron: '* * * * *', timeZone: 'UTC', job: { ...job, payload: () => 1 } }),
    ).toThrow(/job\.payload/);
  });

  test('sending a schedule command before start() is refused', async () => {
    await expect(
      new KairosClient({ ...base, tenant: 'acme' }).pauseSchedule({ scheduleId: 's' }),
    ).rejects.toThrow(/start\(\)/);
  });
});
