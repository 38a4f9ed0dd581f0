import { describe, expect, test } from 'vitest';
import {
  compileCron,
  compileJobLimits,
  checkTimeZone,
  DEFAULT_RETRY_BACKOFF,
  MAX_MISFIRE_COUNT,
  parseScheduleSpec,
} from '@kairos/core';

const now = new Date('2026-11-29T12:00:00Z');
const limits = compileJobLimits({ maxPayloadBytes: 100 });
const ok = {
  tenant: 'acme',
  cron: '30 2 * * *',
  time_zone: 'America/New_York',
  job: { type: 'report.daily', resource_class: 'default', payload: { to: 'a@b.c' } },
};

function errorsOf(input: unknown): Record<string, string> {
  const r = parseScheduleSpec(input, limits, now);
  if (r.ok) throw new Error('expected errors');
  return Object.fromEntries(r.errors.map((e) => [e.field, e.message]));
}

describe('parseScheduleSpec', () => {
  test('a minimal schedule takes every default', () => {
    expect(parseScheduleSpec(ok, limits, now)).toEqual({
      ok: true,
      value: {
        tenantId: 'acme',
        cron: '30 2 * * *',
        timeZone: 'America/New_York',
        startAt: null,
        endAt: null,
        dst: { gap: 'shift', overlap: 'first' },
        job: {
          type: 'report.daily',
          resourceClass: 'default',
          payload: '{"to":"a@b.c"}',
          maxAttempts: 3,
          retry: DEFAULT_RETRY_BACKOFF,
          deadlineMs: null,
        },
        misfire: { kind: 'fire_latest' },
        overlap: 'allow',
        jitterMs: 0,
        slaMs: null,
      },
    });
  });

  test('every field given is kept', () => {
    const r = parseScheduleSpec(
      {
        ...ok,
        cron: ' 15 */10 1-3 * * 1-5 ',
        time_zone: 'australia/lord_howe',
        start_at: '2026-12-01T00:00:00+11:00',
        end_at: '2027-12-01T00:00:00Z',
        job: {
          ...ok.job,
          max_attempts: 5,
          retry: { base_ms: 10, cap_ms: 20, jitter_ms: 0 },
          deadline_ms: 60_000,
        },
        dst: { gap: 'skip', overlap: 'both' },
        misfire: { kind: 'within', window_ms: 3_600_000 },
        overlap: 'buffer_one',
        jitter_ms: 30_000,
      },
      limits,
      now,
    );
    expect(r.ok && r.value).toMatchObject({
      cron: '15 */10 1-3 * * 1-5',
      timeZone: 'Australia/Lord_Howe',
      startAt: new Date('2026-11-30T13:00:00Z'),
      endAt: new Date('2027-12-01T00:00:00Z'),
      job: { maxAttempts: 5, retry: { baseMs: 10, capMs: 20, jitterMs: 0 }, deadlineMs: 60_000 },
      dst: { gap: 'skip', overlap: 'both' },
      misfire: { kind: 'within', windowMs: 3_600_000, maxCount: MAX_MISFIRE_COUNT },
      overlap: 'buffer_one',
      jitterMs: 30_000,
    });
    const all = parseScheduleSpec({ ...ok, misfire: { kind: 'fire_all', max_count: 7 } }, limits, now);
    expect(all.ok && all.value.misfire).toEqual({ kind: 'fire_all', maxCount: 7 });
    const skip = parseScheduleSpec({ ...ok, misfire: { kind: 'skip' } }, limits, now);
    expect(skip.ok && skip.value.misfire).toEqual({ kind: 'skip' });
  });

  test('every bad field is reported at once, with its path', () => {
    expect(
      errorsOf({
        tenant: 'acme corp',
        cron: '61 * * * *',
        time_zone: 'Mars/Olympus_Mons',
        start_at: 'yesterday',
        job: {
          type: 'x',
          resource_class: 'gpu',
          max_attempts: 101,
          retry: { base_ms: 500, cap_ms: 100 },
          extra: 1,
        },
        dst: { gap: 'later', overlap: 'middle' },
        misfire: { kind: 'fire_all' },
        overlap: 'queue',
        jitter_ms: -1,
        bogus: true,
      }),
    ).toEqual({
      tenant: 'letters, digits and . _ : - only',
      cron: 'invalid cron expression: Constraint error, got value 61 expected range 0-59',
      time_zone: '"Mars/Olympus_Mons" is not an IANA time zone (for example America/New_York)',
      start_at: expect.stringMatching(/datetime/i),
      'job.resource_class': 'unknown resource class "gpu"; one of critical, default, cpu, io',
      'job.max_attempts': expect.stringMatching(/100/),
      'job.retry.cap_ms': 'cap_ms (100) must be at least base_ms (500)',
      'job.extra': 'Unrecognized key: "extra"',
      'dst.gap': expect.stringMatching(/shift.*skip/),
      'dst.overlap': expect.stringMatching(/first.*last.*both/),
      'misfire.max_count': expect.any(String),
      overlap: expect.stringMatching(/allow.*skip.*buffer_one.*cancel_previous/),
      jitter_ms: expect.any(String),
      bogus: 'Unrecognized key: "bogus"',
    });
  });

  test('errors carry the path prefix; a non-object body is reported as such', () => {
    const r = parseScheduleSpec({ ...ok, cron: 'nope' }, limits, now, 'schedules.2');
    expect(!r.ok && r.errors.map((e) => e.field)).toEqual(['schedules.2.cron']);
    expect(errorsOf(null)).toEqual({ '(body)': expect.any(String) });
    expect(errorsOf({})).toMatchObject({
      tenant: expect.any(String),
      cron: expect.any(String),
      job: expect.any(String),
    });
  });

  test('misfire: the kind picks the required fields', () => {
    expect(errorsOf({ ...ok, misfire: { kind: 'never' } })).toEqual({
      'misfire.kind': expect.stringMatching(/fire_latest/),
    });
    expect(errorsOf({ ...ok, misfire: { kind: 'within' } })).toEqual({
      'misfire.window_ms': expect.any(String),
    });
    expect(errorsOf({ ...ok, misfire: { kind: 'fire_all', max_count: MAX_MISFIRE_COUNT + 1 } })).toEqual({
      'misfire.max_count': expect.any(String),
    });
    expect(errorsOf({ ...ok, misfire: { kind: 'skip', max_count: 3 } })).toEqual({
      'misfire.max_count': 'Unrecognized key: "max_count"',
    });
  });

  test('start and end: ISO with an offset, end after start and not past, and the schedule must fire in between', () => {
    expect(errorsOf({ ...ok, start_at: '2027-01-01T00:00:00' })).toEqual({ start_at: expect.any(String) });
    expect(errorsOf({ ...ok, start_at: '2027-01-02T00:00:00Z', end_at: '2027-01-01T00:00:00Z' })).toEqual({
      end_at: 'end_at must be after start_at',
    });
    expect(errorsOf({ ...ok, end_at: '2026-01-01T00:00:00Z' })).toEqual({ end_at: 'end_at is in the past' });
    // Daily 02:30 New York never fires within these 2 hours of a day.
    expect(
      errorsOf({ ...ok, start_at: '2027-01-01T12:00:00-05:00', end_at: '2027-01-01T14:00:00-05:00' }),
    ).toEqual({ end_at: expect.stringMatching(/never fires/) });
  });

  test('payload size and a deadline relative to the fire time', () => {
    expect(errorsOf({ ...ok, job: { ...ok.job, payload: 'x'.repeat(200) } })).toEqual({
      'job.payload': 'payload is 202 bytes as JSON; the limit is 100',
    });
    // Tagged with its rule, as for a job: the Kafka ingress rejects it as PAYLOAD_TOO_LARGE.
    const big = parseScheduleSpec({ ...ok, job: { ...ok.job, payload: 'x'.repeat(200) } }, limits, now);
    expect(big.ok ? [] : big.errors.map((e) => e.rule)).toEqual(['PAYLOAD_TOO_LARGE']);
    const other = parseScheduleSpec({ ...ok, cron: 'nope' }, limits, now);
    expect(other.ok ? [] : other.errors.map((e) => e.rule)).toEqual([undefined]);
    expect(errorsOf({ ...ok, job: { ...ok.job, deadline_ms: 0 } })).toEqual({
      'job.deadline_ms': expect.any(String),
    });
  });
});

describe('compileCron', () => {
  test('5 and 6 fields and the @ aliases are accepted', () => {
    for (const e of [
      '*/15 * * * *',
      '0 9 * * 1-5',
      '30 0 0 1 1 *',
      '0 0 L * *',
      '0 0 * * 5L',
      '0 0 * * 1#2',
      '@daily',
      '0 0 * jan,jul mon',
    ]) {
      expect(compileCron(e).ok, e).toBe(true);
    }
  });

  test('a bad expression gives the reason', () => {
    const reason = (e: string) => {
      const r = compileCron(e);
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason('* *')).toMatch(/expected 5 fields .* or 6 .*, got 2/);
    expect(reason('')).toMatch(/got 0/);
    expect(reason('* * * * * * *')).toMatch(/got 7/);
    expect(reason('0 25 * * *')).toBe('Constraint error, got value 25 expected range 0-23');
    expect(reason('0 0 31 2 *')).toMatch(/day of month/);
    expect(reason('H * * * *')).toMatch(/hashed values \(H\)/);
    expect(reason('0 0 * * thu')).toBe('ok');
    expect(reason('@fortnightly')).not.toBe('ok');
  });
});

describe('checkTimeZone', () => {
  test('IANA names pass (with their canonical case); fixed offsets and unknown names do not', () => {
    expect(checkTimeZone('Pacific/Chatham')).toEqual({ ok: true, name: 'Pacific/Chatham' });
    expect(checkTimeZone('america/new_york')).toEqual({ ok: true, name: 'America/New_York' });
    expect(checkTimeZone('Asia/Kolkata')).toEqual({ ok: true, name: 'Asia/Kolkata' });
    expect(checkTimeZone('UTC')).toEqual({ ok: true, name: 'UTC' });
    expect(checkTimeZone('Etc/GMT-14')).toEqual({ ok: true, name: 'Etc/GMT-14' });
    for (const bad of ['+05:30', '-04:00', 'UTC+5', 'GMT-3', 'Mars/Base', '']) {
      expect(checkTimeZone(bad).ok, bad).toBe(false);
    }
    expect(checkTimeZone('+05:30')).toMatchObject({ reason: expect.stringMatching(/fixed UTC offset/) });
  });
});
