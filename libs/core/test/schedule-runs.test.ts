import { describe, expect, test } from 'vitest';
import {
  decideOverlap,
  mergePatch,
  nextOverlapState,
  parseScheduleSpec,
  compileJobLimits,
  scheduleRequestOf,
  selectMissedRuns,
  spreadDueTimes,
  type OverlapAction,
  type OverlapPolicy,
  type OverlapState,
} from '@kairos/core';

const missed = [1000, 2000, 3000, 4000, 5000].map((fireAt) => ({ fireAt }));
const fires = (xs: readonly { fireAt: number }[]) => xs.map((x) => x.fireAt);

describe('selectMissedRuns', () => {
  const now = 10_000;
  test('skip runs none', () => {
    const r = selectMissedRuns({ kind: 'skip' }, missed, now);
    expect(fires(r.run)).toEqual([]);
    expect(fires(r.drop)).toEqual([1000, 2000, 3000, 4000, 5000]);
  });
  test('fire_latest runs the newest only', () => {
    const r = selectMissedRuns({ kind: 'fire_latest' }, missed, now);
    expect(fires(r.run)).toEqual([5000]);
    expect(fires(r.drop)).toEqual([1000, 2000, 3000, 4000]);
  });
  test('fire_all runs the newest max_count, oldest first', () => {
    expect(fires(selectMissedRuns({ kind: 'fire_all', maxCount: 3 }, missed, now).run)).toEqual([
      3000, 4000, 5000,
    ]);
    expect(fires(selectMissedRuns({ kind: 'fire_all', maxCount: 10 }, missed, now).run)).toEqual(
      fires(missed),
    );
  });
  test('within runs those younger than the window (then the newest max_count)', () => {
    // Younger than 7.5 s at 10 s: fired after 2.5 s.
    expect(
      fires(selectMissedRuns({ kind: 'within', windowMs: 7500, maxCount: 10 }, missed, now).run),
    ).toEqual([3000, 4000, 5000]);
    expect(fires(selectMissedRuns({ kind: 'within', windowMs: 7500, maxCount: 2 }, missed, now).run)).toEqual(
      [4000, 5000],
    );
    // Exactly as old as the window: not younger.
    expect(
      fires(selectMissedRuns({ kind: 'within', windowMs: 5000, maxCount: 10 }, missed, now).run),
    ).toEqual([]);
  });
  test('nothing missed, nothing to run', () => {
    expect(selectMissedRuns({ kind: 'fire_latest' }, [], now)).toEqual({ run: [], drop: [] });
  });
  test('catch-up runs of the same outage already dispatched count against the quota', () => {
    expect(fires(selectMissedRuns({ kind: 'fire_latest' }, missed, now, 1).run)).toEqual([]);
    expect(fires(selectMissedRuns({ kind: 'fire_latest' }, missed, now, 1).drop)).toEqual(fires(missed));
    expect(fires(selectMissedRuns({ kind: 'fire_all', maxCount: 3 }, missed, now, 2).run)).toEqual([5000]);
    expect(fires(selectMissedRuns({ kind: 'fire_all', maxCount: 3 }, missed, now, 5).run)).toEqual([]);
    expect(
      fires(selectMissedRuns({ kind: 'within', windowMs: 7500, maxCount: 2 }, missed, now, 1).run),
    ).toEqual([5000]);
  });
});

describe('decideOverlap', () => {
  const run = (policy: OverlapPolicy, state: OverlapState, n: number): OverlapAction[] => {
    const out: OverlapAction[] = [];
    let s = state;
    for (let i = 0; i < n; i++) {
      const a = decideOverlap(policy, s);
      out.push(a);
      s = nextOverlapState(s, a);
    }
    return out;
  };
  const idle = { running: false, waiting: false };
  const busy = { running: true, waiting: false };

  test('nothing running: every policy dispatches', () => {
    for (const p of ['allow', 'skip', 'buffer_one', 'cancel_previous'] as const) {
      expect(decideOverlap(p, idle)).toBe('dispatch');
    }
  });
  test('allow dispatches whatever runs', () => {
    expect(run('allow', busy, 3)).toEqual(['dispatch', 'dispatch', 'dispatch']);
  });
  test('skip skips while the previous run is unfinished', () => {
    expect(run('skip', busy, 2)).toEqual(['skip', 'skip']);
    // Three due at once with nothing running: the first runs, the others are skipped.
    expect(run('skip', idle, 3)).toEqual(['dispatch', 'skip', 'skip']);
  });
  test('buffer_one keeps one waiting and skips the rest', () => {
    expect(run('buffer_one', busy, 3)).toEqual(['wait', 'skip', 'skip']);
    expect(run('buffer_one', idle, 3)).toEqual(['dispatch', 'wait', 'skip']);
    // An older run already waits: the new one would be a second waiter.
    expect(decideOverlap('buffer_one', { running: true, waiting: true })).toBe('skip');
    expect(decideOverlap('buffer_one', { running: false, waiting: true })).toBe('skip');
  });
  test('cancel_previous cancels what runs and dispatches the new one', () => {
    expect(run('cancel_previous', busy, 2)).toEqual(['cancel_previous', 'cancel_previous']);
    expect(run('cancel_previous', idle, 2)).toEqual(['dispatch', 'cancel_previous']);
  });
});

test('spreadDueTimes never exceeds the rate', () => {
  expect(spreadDueTimes(4, 1000, 10)).toEqual([1000, 1100, 1200, 1300]);
  expect(spreadDueTimes(3, 0, 3)).toEqual([0, 334, 668]); // rounded up: at most 3 per second
  expect(spreadDueTimes(0, 0, 10)).toEqual([]);
  expect(() => spreadDueTimes(1, 0, 0)).toThrow(RangeError);
});

describe('scheduleRequestOf and mergePatch', () => {
  const limits = compileJobLimits();
  const now = new Date('2026-01-01T00:00:00Z');
  const body = {
    tenant: 'acme',
    cron: '30 2 * * *',
    time_zone: 'America/New_York',
    job: { type: 'report.daily', resource_class: 'default', payload: { a: 1, b: [1, 2] } },
    misfire: { kind: 'within', window_ms: 60000 },
    overlap: 'skip',
    jitter_ms: 1000,
  };

  test('the wire form of a parsed spec parses back to the same spec', () => {
    const parsed = parseScheduleSpec(body, limits, now);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const again = parseScheduleSpec(scheduleRequestOf(parsed.value), limits, now);
    expect(again).toEqual(parsed);
  });

  test('a merge patch changes what it names, null removes, payload is replaced whole', () => {
    const parsed = parseScheduleSpec(body, limits, now);
    if (!parsed.ok) throw new Error('invalid');
    const merged = mergePatch(scheduleRequestOf(parsed.value), {
      cron: '0 3 * * *',
      job: { payload: { c: 3 } },
      jitter_ms: null,
    }) as Record<string, unknown>;
    expect(merged.cron).toBe('0 3 * * *');
    expect(merged.jitter_ms).toBeUndefined();
    expect((merged.job as Record<string, unknown>).payload).toEqual({ c: 3 });
    expect((merged.job as Record<string, unknown>).type).toBe('report.daily');
    expect(merged.time_zone).toBe('America/New_York');
  });
});
