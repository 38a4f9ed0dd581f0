import { describe, expect, test } from 'vitest';
import {
  fireTimesBetween,
  nextFireTimes,
  occurrenceId,
  previewFireTimes,
  type Occurrence,
  type ScheduleTiming,
} from '@kairos/core';

const ms = (iso: string) => Date.parse(iso);
const utc = (o: Occurrence) => new Date(o.instant).toISOString();
/** [nominal local, UTC instant, local at the instant, kind] for compact expectations. */
const rows = (os: readonly Occurrence[]) =>
  os.map((o) => [o.nominal.slice(0, o.nominal.indexOf('[')), utc(o).slice(0, 19) + 'Z', o.local, o.kind]);

function day(timing: ScheduleTiming, fromIso: string, toIso: string) {
  return rows(fireTimesBetween(timing, ms(fromIso), ms(toIso), 1000));
}

describe('spring-forward gap (a wall time that does not exist)', () => {
  const ny = { cron: '30 2 * * *', timeZone: 'America/New_York' };

  test('shift (default): 02:30 in the 02:00→03:00 gap fires at 03:00 local, the first instant after it', () => {
    expect(day(ny, '2026-03-07T12:00Z', '2026-03-09T12:00Z')).toEqual([
      ['2026-03-08T02:30:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'gap-shifted'],
      ['2026-03-09T02:30:00', '2026-03-09T06:30:00Z', '2026-03-09T02:30:00-04:00', 'regular'],
    ]);
  });

  test('skip: no run that day', () => {
    expect(day({ ...ny, dst: { gap: 'skip' } }, '2026-03-07T12:00Z', '2026-03-09T12:00Z')).toEqual([
      ['2026-03-09T02:30:00', '2026-03-09T06:30:00Z', '2026-03-09T02:30:00-04:00', 'regular'],
    ]);
  });

  test('every 15 minutes: each gap time is shifted to 03:00 and keeps its own identity', () => {
    const os = fireTimesBetween(
      { cron: '*/15 * * * *', timeZone: 'America/New_York' },
      ms('2026-03-08T06:45Z'),
      ms('2026-03-08T07:16Z'),
      100,
    );
    expect(rows(os)).toEqual([
      ['2026-03-08T01:45:00', '2026-03-08T06:45:00Z', '2026-03-08T01:45:00-05:00', 'regular'],
      ['2026-03-08T02:00:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'gap-shifted'],
      ['2026-03-08T02:15:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'gap-shifted'],
      ['2026-03-08T02:30:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'gap-shifted'],
      ['2026-03-08T02:45:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'gap-shifted'],
      ['2026-03-08T03:00:00', '2026-03-08T07:00:00Z', '2026-03-08T03:00:00-04:00', 'regular'],
      ['2026-03-08T03:15:00', '2026-03-08T07:15:00Z', '2026-03-08T03:15:00-04:00', 'regular'],
    ]);
    expect(new Set(os.map((o) => occurrenceId('s1', o.nominal, o.instantIndex))).size).toBe(os.length);
  });

  test('Europe/London 01:00→02:00, Australia/Lord_Howe 02:00→02:30, Pacific/Chatham 02:45→03:45', () => {
    expect(
      day({ cron: '30 1 * * *', timeZone: 'Europe/London' }, '2026-03-29T00:00Z', '2026-03-29T12:00Z'),
    ).toEqual([['2026-03-29T01:30:00', '2026-03-29T01:00:00Z', '2026-03-29T02:00:00+01:00', 'gap-shifted']]);
    expect(
      day({ cron: '15 2 * * *', timeZone: 'Australia/Lord_Howe' }, '2026-10-03T12:00Z', '2026-10-04T12:00Z'),
    ).toEqual([['2026-10-04T02:15:00', '2026-10-03T15:30:00Z', '2026-10-04T02:30:00+11:00', 'gap-shifted']]);
    expect(
      day({ cron: '0 3 * * *', timeZone: 'Pacific/Chatham' }, '2026-09-26T12:00Z', '2026-09-27T12:00Z'),
    ).toEqual([['2026-09-27T03:00:00', '2026-09-26T14:00:00Z', '2026-09-27T03:45:00+13:45', 'gap-shifted']]);
  });

  test('a 6-field (seconds) expression in the gap', () => {
    const os = fireTimesBetween(
      { cron: '*/20 59 1,2 * * *', timeZone: 'America/New_York', dst: { gap: 'skip' } },
      ms('2026-03-08T06:00Z'),
      ms('2026-03-08T08:00Z'),
      100,
    );
    expect(rows(os).map((r) => r[2])).toEqual([
      '2026-03-08T01:59:00-05:00',
      '2026-03-08T01:59:20-05:00',
      '2026-03-08T01:59:40-05:00',
    ]);
  });
});

describe('fall-back overlap (a wall time that exists twice)', () => {
  const ny = { cron: '30 1 * * *', timeZone: 'America/New_York' };
  const range = ['2026-10-31T12:00Z', '2026-11-01T12:00Z'] as const;

  test('first (default): the earlier instant (EDT) only', () => {
    expect(day(ny, ...range)).toEqual([
      ['2026-11-01T01:30:00', '2026-11-01T05:30:00Z', '2026-11-01T01:30:00-04:00', 'overlap-first'],
    ]);
  });

  test('last: the later instant (EST) only', () => {
    expect(day({ ...ny, dst: { overlap: 'last' } }, ...range)).toEqual([
      ['2026-11-01T01:30:00', '2026-11-01T06:30:00Z', '2026-11-01T01:30:00-05:00', 'overlap-last'],
    ]);
  });

  test('both: two occurrences with distinct ids', () => {
    const os = fireTimesBetween({ ...ny, dst: { overlap: 'both' } }, ms(range[0]), ms(range[1]), 10);
    expect(rows(os)).toEqual([
      ['2026-11-01T01:30:00', '2026-11-01T05:30:00Z', '2026-11-01T01:30:00-04:00', 'overlap-first'],
      ['2026-11-01T01:30:00', '2026-11-01T06:30:00Z', '2026-11-01T01:30:00-05:00', 'overlap-last'],
    ]);
    expect(os.map((o) => o.instantIndex)).toEqual([0, 1]);
    const ids = os.map((o) => occurrenceId('s1', o.nominal, o.instantIndex));
    expect(ids[0]).not.toBe(ids[1]);
  });

  test('both, every 15 minutes: the two passes through the overlap interleave in time order', () => {
    const os = fireTimesBetween(
      { cron: '*/15 1 * * *', timeZone: 'America/New_York', dst: { overlap: 'both' } },
      ms('2026-11-01T00:00Z'),
      ms('2026-11-01T12:00Z'),
      100,
    );
    expect(os.map((o) => o.local)).toEqual([
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:15:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:45:00-04:00',
      '2026-11-01T01:00:00-05:00',
      '2026-11-01T01:15:00-05:00',
      '2026-11-01T01:30:00-05:00',
      '2026-11-01T01:45:00-05:00',
    ]);
  });

  test('Lord_Howe: a 30-minute overlap (02:00 +11:00 → 01:30 +10:30)', () => {
    const os = fireTimesBetween(
      { cron: '45 1 * * *', timeZone: 'Australia/Lord_Howe', dst: { overlap: 'both' } },
      ms('2026-04-04T12:00Z'),
      ms('2026-04-05T12:00Z'),
      10,
    );
    expect(rows(os)).toEqual([
      ['2026-04-05T01:45:00', '2026-04-04T14:45:00Z', '2026-04-05T01:45:00+11:00', 'overlap-first'],
      ['2026-04-05T01:45:00', '2026-04-04T15:15:00Z', '2026-04-05T01:45:00+10:30', 'overlap-last'],
    ]);
  });
});

describe('zones without DST and the bounds of a schedule', () => {
  test('Asia/Kolkata: every occurrence regular at +05:30', () => {
    const os = nextFireTimes({ cron: '30 2 * * *', timeZone: 'Asia/Kolkata' }, ms('2026-03-01T00:00Z'), 60);
    expect(os.every((o) => o.kind === 'regular' && o.local.endsWith('T02:30:00+05:30'))).toBe(true);
    expect(utc(os[0]!)).toBe('2026-03-01T21:00:00.000Z');
  });

  test('startAt is inclusive, endAt exclusive', () => {
    const timing = {
      cron: '0 * * * *',
      timeZone: 'UTC',
      startAt: new Date('2026-05-01T03:00Z'),
      endAt: new Date('2026-05-01T06:00Z'),
    };
    expect(nextFireTimes(timing, 0, 10).map(utc)).toEqual([
      '2026-05-01T03:00:00.000Z',
      '2026-05-01T04:00:00.000Z',
      '2026-05-01T05:00:00.000Z',
    ]);
    expect(fireTimesBetween(timing, ms('2026-05-01T04:00Z'), ms('2026-05-01T05:00Z'), 10).map(utc)).toEqual([
      '2026-05-01T04:00:00.000Z',
    ]);
  });

  test('after is exclusive; resuming after an occurrence position keeps shifted ties', () => {
    const timing = { cron: '*/15 * * * *', timeZone: 'America/New_York' };
    const all = nextFireTimes(timing, ms('2026-03-08T06:30Z'), 8);
    for (let k = 1; k < all.length; k++) {
      const resumed = nextFireTimes(timing, all[k - 1]!, all.length - k);
      expect(resumed).toEqual(all.slice(k));
    }
    // By instant alone, the ties at 03:00 are all "not after" each other.
    expect(nextFireTimes(timing, ms('2026-03-08T07:00Z'), 1)[0]!.local).toBe('2026-03-08T03:15:00-04:00');
  });

  test('counts: zero gives nothing, a bad count or an invalid rule throws', () => {
    const timing = { cron: '* * * * *', timeZone: 'UTC' };
    expect(nextFireTimes(timing, 0, 0)).toEqual([]);
    expect(() => nextFireTimes(timing, 0, -1)).toThrow(RangeError);
    expect(() => nextFireTimes({ ...timing, cron: '* *' }, 0, 1)).toThrow(/invalid cron/);
    expect(() => nextFireTimes({ ...timing, timeZone: 'Nowhere/Land' }, 0, 1)).toThrow(RangeError);
  });

  test('a rare expression (29 February) still finds its next time, years ahead', () => {
    const os = nextFireTimes({ cron: '0 0 29 2 *', timeZone: 'Europe/London' }, ms('2026-01-01T00:00Z'), 2);
    expect(os.map((o) => o.local)).toEqual(['2028-02-29T00:00:00+00:00', '2032-02-29T00:00:00+00:00']);
  });
});

describe('previewFireTimes', () => {
  test('instants and local wall-clock times, with the jitter applied to fireAt', () => {
    const p = previewFireTimes(
      { cron: '30 2 * * *', timeZone: 'America/New_York' },
      ms('2026-03-07T12:00Z'),
      2,
      -1500,
    );
    expect(p).toEqual([
      {
        nominal: '2026-03-08T02:30:00[America/New_York]',
        kind: 'gap-shifted',
        instant: '2026-03-08T07:00:00.000Z',
        local: '2026-03-08T03:00:00-04:00',
        fireAt: '2026-03-08T06:59:58.500Z',
      },
      {
        nominal: '2026-03-09T02:30:00[America/New_York]',
        kind: 'regular',
        instant: '2026-03-09T06:30:00.000Z',
        local: '2026-03-09T02:30:00-04:00',
        fireAt: '2026-03-09T06:29:58.500Z',
      },
    ]);
  });
});
