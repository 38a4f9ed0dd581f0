import { compileJobLimits, parseScheduleSpec } from '@kairos/core';
import { SCHEMAS, type ScheduleRequestRecord, type ScheduleRulesRecord } from '@kairos/schemas';
import avro from 'avsc';
import { describe, expect, test } from 'vitest';
import { commandName, mapRequest } from '../src/request-commands.js';

const type = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
/** Through the wire and back, as the ingest sees a request. */
const roundTrip = (r: ScheduleRequestRecord) => type.fromBuffer(type.toBuffer(r)) as ScheduleRequestRecord;

const envelope = { request_id: 'r1', tenant: 'acme', idempotency_key: 'nightly' };
const ID = '0190d3c4-0000-7000-8000-000000000001';

const rules = (extra: Partial<ScheduleRulesRecord> = {}): ScheduleRulesRecord => ({
  cron: '30 2 * * *',
  time_zone: 'America/New_York',
  start_at: null,
  end_at: null,
  job: {
    type: 'report.sales',
    resource_class: 'default',
    payload: '{"region":"us"}',
    max_attempts: null,
    retry: null,
    deadline_ms: null,
  },
  dst: null,
  misfire: null,
  overlap: null,
  jitter_ms: null,
  sla_ms: null,
  ...extra,
});

const request = (command: ScheduleRequestRecord['command']) => roundTrip({ ...envelope, command });
const now = new Date('2026-02-20T12:00:00Z');
const limits = compileJobLimits();

describe('mapping schedule commands onto the HTTP shapes', () => {
  test('a create carries every field of POST /v1/schedules; its key is the schedule idempotency key', () => {
    const r = request({
      'io.kairos.requests.CreateSchedule': rules({
        start_at: Date.parse('2026-03-01T05:00:00Z'),
        end_at: Date.parse('2027-03-01T05:00:00Z'),
        job: { ...rules().job, max_attempts: 3, deadline_ms: 3_600_000 },
        dst: { gap: 'skip', overlap: null },
        misfire: { kind: 'fire_all', max_count: 10, window_ms: null },
        overlap: 'skip',
        jitter_ms: 0,
        sla_ms: 7_200_000,
      }),
    });
    expect(commandName(r)).toBe('CreateSchedule');
    const m = mapRequest(r);
    const body = {
      tenant: 'acme',
      cron: '30 2 * * *',
      time_zone: 'America/New_York',
      start_at: '2026-03-01T05:00:00.000Z',
      end_at: '2027-03-01T05:00:00.000Z',
      job: {
        type: 'report.sales',
        resource_class: 'default',
        payload: { region: 'us' },
        max_attempts: 3,
        deadline_ms: 3_600_000,
      },
      dst: { gap: 'skip' },
      misfire: { kind: 'fire_all', max_count: 10 },
      overlap: 'skip',
      jitter_ms: 0,
      sla_ms: 7_200_000,
      idempotency_key: 'nightly',
    };
    expect(m).toEqual({ ok: true, command: { name: 'CreateSchedule', body } });
    // The body is exactly what the schedule handlers accept (they take the key out first).
    const { idempotency_key: _key, ...spec } = body;
    expect(parseScheduleSpec(spec, limits, now).ok).toBe(true);
  });

  test('a retry policy keeps only the fields given', () => {
    const retry = { base_ms: 60_000, cap_ms: null, jitter_ms: 0 };
    const m = mapRequest(
      request({ 'io.kairos.requests.CreateSchedule': rules({ job: { ...rules().job, retry } }) }),
    );
    expect(m.ok && m.command.name === 'CreateSchedule' && m.command.body.job).toMatchObject({
      retry: { base_ms: 60_000, jitter_ms: 0 },
    });
  });

  test('null fields are left out, so the defaults apply', () => {
    const m = mapRequest(request({ 'io.kairos.requests.CreateSchedule': rules() }));
    expect(m.ok && m.command.name === 'CreateSchedule' && m.command.body).toEqual({
      tenant: 'acme',
      cron: '30 2 * * *',
      time_zone: 'America/New_York',
      job: { type: 'report.sales', resource_class: 'default', payload: { region: 'us' } },
      idempotency_key: 'nightly',
    });
  });

  test('a payload that is not JSON, or a time Date cannot hold, is a field error', () => {
    const bad = rules({ start_at: 9e15, job: { ...rules().job, payload: '{nope' } });
    expect(mapRequest(request({ 'io.kairos.requests.CreateSchedule': bad }))).toMatchObject({
      ok: false,
      name: 'CreateSchedule',
      fields: [{ field: 'job.payload' }, { field: 'start_at' }],
    });
  });

  test('an update replaces the rules (PUT), with If-Match when expected_version is set', () => {
    const update = (expected: number | null) =>
      mapRequest(
        request({
          'io.kairos.requests.UpdateSchedule': {
            schedule_id: ID,
            expected_version: expected,
            ...rules({ cron: '0 3 * * *' }),
          },
        }),
      );
    const body = {
      tenant: 'acme',
      cron: '0 3 * * *',
      time_zone: 'America/New_York',
      job: { type: 'report.sales', resource_class: 'default', payload: { region: 'us' } },
    };
    expect(update(4)).toEqual({
      ok: true,
      command: { name: 'UpdateSchedule', change: { kind: 'update', id: ID, body, expectedVersion: 4 } },
    });
    const any = update(null);
    expect(any.ok && any.command.name === 'UpdateSchedule' && any.command.change).toMatchObject({
      expectedVersion: undefined,
    });
  });

  test('pause, resume, delete and trigger name their schedule', () => {
    const map = (command: ScheduleRequestRecord['command']) => mapRequest(request(command));
    expect(map({ 'io.kairos.requests.PauseSchedule': { schedule_id: ID } })).toEqual({
      ok: true,
      command: { name: 'PauseSchedule', change: { kind: 'pause', id: ID } },
    });
    expect(map({ 'io.kairos.requests.ResumeSchedule': { schedule_id: ID, catch_up: true } })).toEqual({
      ok: true,
      command: { name: 'ResumeSchedule', change: { kind: 'resume', id: ID, body: { catch_up: true } } },
    });
    expect(map({ 'io.kairos.requests.DeleteSchedule': { schedule_id: ID } })).toEqual({
      ok: true,
      command: { name: 'DeleteSchedule', change: { kind: 'delete', id: ID } },
    });
    expect(map({ 'io.kairos.requests.TriggerSchedule': { schedule_id: ID } })).toEqual({
      ok: true,
      command: { name: 'TriggerSchedule', change: { kind: 'trigger', id: ID } },
    });
  });

  test('a request written before the schedule commands existed still reads (the union only grew)', () => {
    const old = avro.Type.forSchema({
      ...SCHEMAS.scheduleRequest,
      fields: (SCHEMAS.scheduleRequest.fields as { name: string; type: unknown }[]).map((f) =>
        f.name === 'command' ? { ...f, type: (f.type as unknown[]).slice(0, 3) } : f,
      ),
    } as avro.Schema);
    const written = old.toBuffer({
      ...envelope,
      command: { 'io.kairos.requests.CancelJob': { job_id: ID } },
    });
    const read = type.fromBuffer(written, type.createResolver(old)) as ScheduleRequestRecord;
    expect(mapRequest(read)).toEqual({ ok: true, command: { name: 'CancelJob', jobId: ID } });
  });
});
