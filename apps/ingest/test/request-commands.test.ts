import { compileJobLimits, parseCreateJob, parseReschedule } from '@kairos/core';
import { SCHEMAS, type ScheduleRequestRecord } from '@kairos/schemas';
import avro from 'avsc';
import { describe, expect, test } from 'vitest';
import { commandName, mapRequest } from '../src/request-commands.js';

const type = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
/** Through the wire and back, as the ingest sees a request. */
const roundTrip = (r: ScheduleRequestRecord) => type.fromBuffer(type.toBuffer(r)) as ScheduleRequestRecord;

const create = (extra: Record<string, unknown> = {}): ScheduleRequestRecord => ({
  request_id: 'r1',
  tenant: 'acme',
  idempotency_key: 'k1',
  command: {
    'io.kairos.requests.CreateJob': {
      type: 'email.send',
      resource_class: 'io',
      payload: '{"to":"a@example.com"}',
      due_at: null,
      delay_ms: null,
      deadline_at: null,
      max_attempts: null,
      retry: null,
      ...extra,
    },
  },
});

const now = new Date('2026-11-29T12:00:00Z');
const limits = compileJobLimits();

describe('mapping schedule requests onto the HTTP shapes', () => {
  test('a create carries every job field, its key as the job idempotency key', () => {
    const due = Date.parse('2026-11-29T13:00:00Z');
    const r = roundTrip(
      create({
        due_at: due,
        deadline_at: due + 60_000,
        max_attempts: 5,
        retry: { base_ms: 200, cap_ms: null, jitter_ms: 0 },
      }),
    );
    expect(commandName(r)).toBe('CreateJob');
    const m = mapRequest(r);
    expect(m).toEqual({
      ok: true,
      command: {
        name: 'CreateJob',
        body: {
          tenant: 'acme',
          type: 'email.send',
          resource_class: 'io',
          payload: { to: 'a@example.com' },
          idempotency_key: 'k1',
          due_at: '2026-11-29T13:00:00.000Z',
          deadline_at: '2026-11-29T13:01:00.000Z',
          max_attempts: 5,
          retry: { base_ms: 200, jitter_ms: 0 },
        },
      },
    });
    // The body is exactly what the command handlers accept.
    const parsed =
      m.ok && m.command.name === 'CreateJob' ? parseCreateJob(m.command.body, now, limits) : undefined;
    expect(parsed?.ok).toBe(true);
  });

  test('a payload that is not JSON, or a time Date cannot hold, is a field error', () => {
    expect(mapRequest(roundTrip(create({ payload: '{nope' })))).toMatchObject({
      ok: false,
      fields: [{ field: 'payload' }],
    });
    expect(mapRequest(roundTrip(create({ due_at: 9e15 })))).toMatchObject({
      ok: false,
      fields: [{ field: 'due_at' }],
    });
  });

  test('a reschedule: due time, deadline kept, set or cleared', () => {
    const base = { job_id: '0190d3c4-0000-7000-8000-000000000001', due_at: null, delay_ms: 5000 };
    const resched = (extra: Record<string, unknown>): ScheduleRequestRecord => ({
      ...create(),
      command: {
        'io.kairos.requests.RescheduleJob': { ...base, deadline_at: null, clear_deadline: false, ...extra },
      },
    });
    const kept = mapRequest(roundTrip(resched({})));
    expect(kept).toEqual({
      ok: true,
      command: { name: 'RescheduleJob', jobId: base.job_id, body: { delay_ms: 5000 } },
    });
    const cleared = mapRequest(roundTrip(resched({ clear_deadline: true })));
    expect(cleared.ok && cleared.command.name === 'RescheduleJob' && cleared.command.body).toEqual({
      delay_ms: 5000,
      deadline_at: null,
    });
    const set = mapRequest(roundTrip(resched({ deadline_at: Date.parse('2026-11-30T00:00:00Z') })));
    const body = set.ok && set.command.name === 'RescheduleJob' ? set.command.body : {};
    expect(body).toEqual({ delay_ms: 5000, deadline_at: '2026-11-30T00:00:00.000Z' });
    expect(parseReschedule(body, now, limits, { dueAt: now, deadlineAt: null }).ok).toBe(true);
    expect(
      mapRequest(
        roundTrip(resched({ deadline_at: Date.parse('2026-11-30T00:00:00Z'), clear_deadline: true })),
      ),
    ).toMatchObject({ ok: false, fields: [{ field: 'deadline_at' }] });
  });

  test('a cancel names its job', () => {
    const r = roundTrip({ ...create(), command: { 'io.kairos.requests.CancelJob': { job_id: 'j' } } });
    expect(mapRequest(r)).toEqual({ ok: true, command: { name: 'CancelJob', jobId: 'j' } });
  });
});
