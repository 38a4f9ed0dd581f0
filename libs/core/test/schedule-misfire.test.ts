import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  fireTimesBetween,
  MISFIRE_COUNT_CAP,
  nextFireTimes,
  planMisfires,
  type MisfirePolicy,
  type Occurrence,
} from '@kairos/core';

const ms = (iso: string) => Date.parse(iso);
const utc = (o: Occurrence) => new Date(o.instant).toISOString().slice(11, 16);
const hourly = { cron: '0 * * * *', timeZone: 'Europe/London' };
// Last fired: 00:00 UTC (01:00 BST); down until 05:30: 01:00…05:00 missed (5).
const lastFired = nextFireTimes(hourly, ms('2026-06-01T00:00Z') - 1, 1)[0]!;
const now = ms('2026-06-01T05:30Z');

function plan(policy: MisfirePolicy, options = {}, at = now) {
  const p = planMisfires(hourly, lastFired, at, policy, options);
  return {
    fire: p.fire.map(utc),
    skipped: p.skipped.count,
    resume: p.resumeAfter,
    next: p.next && utc(p.next),
  };
}

describe('planMisfires', () => {
  const newest = nextFireTimes(hourly, ms('2026-06-01T05:00Z') - 1, 1)[0]!;

  test('skip: nothing fires, the schedule resumes at its next future time', () => {
    expect(plan({ kind: 'skip' })).toEqual({ fire: [], skipped: 5, resume: newest, next: '06:00' });
  });

  test('fire_latest (the default): one catch-up run, the latest missed', () => {
    expect(plan({ kind: 'fire_latest' })).toEqual({
      fire: ['05:00'],
      skipped: 4,
      resume: newest,
      next: '06:00',
    });
    expect(planMisfires(hourly, lastFired, now).fire.map(utc)).toEqual(['05:00']);
    expect(planMisfires({ ...hourly, misfire: { kind: 'skip' } }, lastFired, now).fire).toEqual([]);
  });

  test('fire_all: the newest max_count missed, oldest first', () => {
    expect(plan({ kind: 'fire_all', maxCount: 3 })).toMatchObject({
      fire: ['03:00', '04:00', '05:00'],
      skipped: 2,
    });
    expect(plan({ kind: 'fire_all', maxCount: 100 })).toMatchObject({
      fire: ['01:00', '02:00', '03:00', '04:00', '05:00'],
      skipped: 0,
    });
  });

  test('within: only those younger than the window', () => {
    // 03:00 is exactly 2.5 h old: not younger than a 2.5 h window.
    expect(plan({ kind: 'within', windowMs: 2.5 * 3_600_000, maxCount: 100 })).toMatchObject({
      fire: ['04:00', '05:00'],
      skipped: 3,
    });
    expect(plan({ kind: 'within', windowMs: 10 * 3_600_000, maxCount: 2 })).toMatchObject({
      fire: ['04:00', '05:00'],
      skipped: 3,
    });
    expect(plan({ kind: 'within', windowMs: 60_000, maxCount: 100 })).toMatchObject({ fire: [], skipped: 5 });
  });

  test('an occurrence late by no more than the tolerance is on time and fires whatever the policy', () => {
    const at = ms('2026-06-01T05:00:00.400Z');
    expect(plan({ kind: 'skip' }, { toleranceMs: 500 }, at)).toMatchObject({ fire: ['05:00'], skipped: 4 });
    expect(plan({ kind: 'skip' }, { toleranceMs: 300 }, at)).toMatchObject({ fire: [], skipped: 5 });
    expect(plan({ kind: 'fire_latest' }, { toleranceMs: 500 }, at)).toMatchObject({
      fire: ['04:00', '05:00'],
      skipped: 3,
    });
    expect(() => plan({ kind: 'skip' }, { toleranceMs: -1 })).toThrow(RangeError);
  });

  test('nothing due: nothing fires and the cursor stays', () => {
    const p = planMisfires(hourly, lastFired, ms('2026-06-01T00:30Z'), { kind: 'fire_all', maxCount: 10 });
    expect(p).toEqual({
      fire: [],
      skipped: { count: 0, exact: true },
      resumeAfter: lastFired,
      next: expect.anything(),
    });
    expect(utc(p.next!)).toBe('01:00');
    expect(planMisfires(hourly, now + 1, now).fire).toEqual([]);
  });

  test('resuming after a position keeps gap-shifted ties that were not yet fired', () => {
    const ny = { cron: '*/15 * * * *', timeZone: 'America/New_York' };
    const [, shifted0215] = fireTimesBetween(ny, ms('2026-03-08T07:00Z'), ms('2026-03-08T07:01Z'), 10);
    expect(shifted0215!.nominal).toBe('2026-03-08T02:15:00[America/New_York]');
    const p = planMisfires(ny, shifted0215!, ms('2026-03-08T07:05Z'), { kind: 'fire_all', maxCount: 10 });
    expect(p.fire.map((o) => o.nominal.slice(11, 16))).toEqual(['02:30', '02:45', '03:00']);
  });

  test('an every-second schedule down for a week: the plan stays cheap and the count is capped', () => {
    const secondly = { cron: '* * * * * *', timeZone: 'UTC' };
    const start = Date.now();
    const p = planMisfires(secondly, ms('2026-06-01T00:00Z'), ms('2026-06-08T00:00Z'), {
      kind: 'fire_all',
      maxCount: 3,
    });
    // The newest 3 missed, then 00:00:00 itself: due exactly now is on time, not missed.
    expect(p.fire.map((o) => new Date(o.instant).toISOString())).toEqual([
      '2026-06-07T23:59:57.000Z',
      '2026-06-07T23:59:58.000Z',
      '2026-06-07T23:59:59.000Z',
      '2026-06-08T00:00:00.000Z',
    ]);
    expect(p.skipped).toEqual({ count: MISFIRE_COUNT_CAP, exact: false });
    expect(Date.now() - start).toBeLessThan(2000);
  });
});

describe('planMisfires properties', () => {
  const policyArb: fc.Arbitrary<MisfirePolicy> = fc.oneof(
    fc.constant({ kind: 'skip' as const }),
    fc.constant({ kind: 'fire_latest' as const }),
    fc.record({ kind: fc.constant('fire_all' as const), maxCount: fc.integer({ min: 1, max: 20 }) }),
    fc.record({
      kind: fc.constant('within' as const),
      windowMs: fc.integer({ min: 1, max: 30 * 3_600_000 }),
      maxCount: fc.integer({ min: 1, max: 20 }),
    }),
  );
  const timingArb = fc.record({
    cron: fc.constantFrom('*/15 * * * *', '0 * * * *', '30 1,2 * * *', '*/20 * 1-3 * * *'),
    timeZone: fc.constantFrom('America/New_York', 'Australia/Lord_Howe', 'Pacific/Chatham', 'Asia/Kolkata'),
    dst: fc.record({
      gap: fc.constantFrom('shift' as const, 'skip' as const),
      overlap: fc.constantFrom('first' as const, 'last' as const, 'both' as const),
    }),
  });
  // Around the 2026 spring and autumn changes of these zones.
  const startArb = fc.oneof(
    fc.integer({ min: ms('2026-03-07T00:00Z'), max: ms('2026-03-09T00:00Z') }),
    fc.integer({ min: ms('2026-04-04T00:00Z'), max: ms('2026-04-06T00:00Z') }),
    fc.integer({ min: ms('2026-09-26T00:00Z'), max: ms('2026-09-28T00:00Z') }),
    fc.integer({ min: ms('2026-10-31T00:00Z'), max: ms('2026-11-02T00:00Z') }),
  );

  test('fires exactly what the policy promises among the due occurrences', () => {
    fc.assert(
      fc.property(
        timingArb,
        policyArb,
        startArb,
        fc.integer({ min: 0, max: 20 * 3_600_000 }),
        fc.integer({ min: 0, max: 3_600_000 }),
        (timing, policy, last, down, tolerance) => {
          const at = last + down;
          const due = fireTimesBetween(timing, last + 1, at + 1, 100_000);
          const missed = due.filter((o) => at - o.instant > tolerance);
          const onTime = due.filter((o) => at - o.instant <= tolerance);
          const p = planMisfires(timing, last, at, policy, { toleranceMs: tolerance });
          let caught: Occurrence[];
          switch (policy.kind) {
            case 'skip':
              caught = [];
              break;
            case 'fire_latest':
              caught = missed.slice(-1);
              break;
            case 'fire_all':
              caught = missed.slice(-policy.maxCount);
              break;
            case 'within':
              caught = missed.filter((o) => at - o.instant < policy.windowMs).slice(-policy.maxCount);
              break;
          }
          expect(p.fire).toEqual([...caught, ...onTime]);
          expect(p.skipped).toEqual({ count: missed.length - caught.length, exact: true });
          expect(p.resumeAfter).toEqual(due.at(-1) ?? last);
          expect(p.next).toEqual(nextFireTimes(timing, at, 1)[0] ?? null);
        },
      ),
      { numRuns: 300 },
    );
  }, 60_000);
});
