import type { Job, Schedule } from '@kairos/core';
import { SCHEMAS, type ScheduleRequestRecord } from '@kairos/schemas';
import avro from 'avsc';
import { describe, expect, test } from 'vitest';
import { outcomeRecord } from '../src/outcomes.js';

const outcomeType = avro.Type.forSchema(SCHEMAS.scheduleRequestOutcome as avro.Schema);
const request = { request_id: 'r1', tenant: 'acme', idempotency_key: 'k1' } as ScheduleRequestRecord;
const now = new Date('2026-02-20T12:00:00.500Z');

const job = { id: 'j1', state: 'SCHEDULED', version: 1, dueAt: new Date('2026-02-20T12:00:00Z') } as Job;
const schedule = (state: Schedule['state']) =>
  ({
    id: 's1',
    tenantId: 'acme',
    state,
    version: 3,
    cron: '*/10 * * * * *',
    timeZone: 'UTC',
    startAt: null,
    endAt: null,
    dst: { gap: 'shift', overlap: 'first' },
    jitterMs: 0,
  }) as unknown as Schedule;

describe('outcome records', () => {
  test('a job command: the job, no schedule', () => {
    const r = outcomeRecord(request, 'CreateJob', { job, schedule: null, duplicate: false }, now);
    expect(r).toMatchObject({
      job_id: 'j1',
      state: 'SCHEDULED',
      version: 1,
      schedule_id: null,
      next_fire_at: null,
    });
    expect(outcomeType.isValid(r)).toBe(true);
  });

  test("a schedule command: the schedule's state, version and next fire time; no job", () => {
    const r = outcomeRecord(
      request,
      'ResumeSchedule',
      { job: null, schedule: schedule('ACTIVE'), duplicate: false },
      now,
    );
    const next = Date.parse('2026-02-20T12:00:10Z');
    expect(r).toMatchObject({
      command: 'ResumeSchedule',
      job_id: '',
      state: 'ACTIVE',
      version: 3,
      schedule_id: 's1',
      next_fire_at: next,
      due_at: next,
      applied_at: now.getTime(),
    });
    expect(outcomeType.isValid(r)).toBe(true);
    // A paused schedule does not fire: no next fire time; the due time is when it was applied.
    const paused = outcomeRecord(
      request,
      'PauseSchedule',
      { job: null, schedule: schedule('PAUSED'), duplicate: true },
      now,
    );
    expect(paused).toMatchObject({
      state: 'PAUSED',
      next_fire_at: null,
      due_at: now.getTime(),
      duplicate: true,
    });
  });

  test('a trigger: its run, and the schedule it ran', () => {
    const r = outcomeRecord(
      request,
      'TriggerSchedule',
      { job, schedule: schedule('PAUSED'), duplicate: false },
      now,
    );
    expect(r).toMatchObject({
      job_id: 'j1',
      state: 'SCHEDULED',
      version: 1,
      schedule_id: 's1',
      next_fire_at: null,
    });
  });
});
