import { describe, expect, test } from 'vitest';
import { nextDeadline, PartitionDeadlines } from '../src/deadlines.js';
import type { ReleasePlan } from '../src/release.js';

/** A clock the test moves by hand. */
const clock = () => {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
};

const plan = (classes: [string, number][], refill: [string, number][] = []): ReleasePlan => ({
  classes: classes.map(([name, limit]) => ({ name, limit })),
  granted: new Map(),
  refillMs: new Map(refill),
});

describe('nextDeadline', () => {
  test('the earliest waiting job less the lead, the reclaim time, Infinity when nothing waits', () => {
    const pop = { nowMs: 10_000, jobs: [], reclaimAtMs: undefined };
    const two = plan([
      ['critical', 500],
      ['default', 500],
    ]);
    expect(nextDeadline({ ...pop, nextDueMs: [undefined, undefined] }, two, 0)).toBe(Infinity);
    expect(nextDeadline({ ...pop, nextDueMs: [12_000, 11_000] }, two, 0)).toBe(11_000);
    expect(nextDeadline({ ...pop, nextDueMs: [12_000, 11_000] }, two, 500)).toBe(10_500);
    expect(nextDeadline({ ...pop, reclaimAtMs: 10_800, nextDueMs: [12_000, 11_000] }, two, 0)).toBe(10_800);
  });

  test('a class its rate limit held back waits for the refill, not for its (past) due time', () => {
    const pop = { nowMs: 10_000, jobs: [], reclaimAtMs: undefined, nextDueMs: [9_000, 30_000] };
    const held = plan(
      [
        ['gpu', 0],
        ['default', 500],
      ],
      [['gpu', 250]],
    );
    expect(nextDeadline(pop, held, 0)).toBe(10_250);
  });
});

describe('PartitionDeadlines', () => {
  test('converts Redis time to local time by the last reading', () => {
    const c = clock();
    const d = new PartitionDeadlines(5000, c.now);
    expect(d.toLocal(123_456)).toBe(1000); // no reading yet: now (early only costs a pop)
    d.sync(50_000); // Redis says 50,000 at local 1,000
    c.advance(10);
    expect(d.toLocal(50_300)).toBe(1300);
  });

  test('a partition is due when its deadline comes, at the latest maxSleepMs after its visit', () => {
    const c = clock();
    const d = new PartitionDeadlines(5000, c.now);
    expect(d.due([0, 1], 0)).toEqual([0, 1]); // never visited
    d.visiting(0);
    d.plan(0, 1300);
    d.visiting(1);
    d.plan(1, Infinity);
    expect(d.due([0, 1], 0)).toEqual([]);
    expect(d.pauseMs([0, 1])).toBe(300);
    c.advance(300);
    expect(d.due([0, 1], 0)).toEqual([0]);
    c.advance(4700);
    expect(d.due([0, 1], 0)).toEqual([0, 1]); // the safety net
  });

  test('a hint earlier than the plan shortens it; a later one does not', () => {
    const c = clock();
    const d = new PartitionDeadlines(60_000, c.now);
    d.visiting(0);
    d.plan(0, 5000);
    expect(d.hint(0, 9000)).toBe(false);
    expect(d.hint(0, 2000)).toBe(true);
    expect(d.pauseMs([0])).toBe(1000);
  });

  test('a hint during a visit is kept whatever the old plan was (the pop may have missed the job)', () => {
    const c = clock();
    const d = new PartitionDeadlines(60_000, c.now);
    d.visiting(0);
    d.plan(0, 1000); // due now: the round visits it
    d.visiting(0);
    // The job arrives after the pop ran but before the visit ends: its due time must survive.
    expect(d.hint(0, 1500)).toBe(true);
    d.plan(0, 40_000); // the pop's view, without the job
    expect(d.pauseMs([0])).toBe(500);
    c.advance(500);
    expect(d.due([0], 0)).toEqual([0]);
    d.visiting(0); // the next visit pops it: the hint is consumed
    d.plan(0, 40_000);
    expect(d.pauseMs([0])).toBe(38_500);
  });

  test('a refresh during a visit outlives the plan of that visit (its pop may predate the change)', () => {
    const c = clock();
    const d = new PartitionDeadlines(1000, c.now);
    d.visiting(3);
    d.refresh(3);
    d.plan(3, c.now() + 1000);
    expect(d.due([3], 0)).toEqual([3]);
    d.visiting(3);
    d.plan(3, c.now() + 1000);
    expect(d.due([3], 0)).toEqual([]);
  });

  test('refresh makes a partition due at once', () => {
    const c = clock();
    const d = new PartitionDeadlines(60_000, c.now);
    d.visiting(3);
    d.plan(3, 50_000);
    d.refresh(3);
    expect(d.due([3], 0)).toEqual([3]);
    expect(d.pauseMs([3])).toBe(0);
  });
});
