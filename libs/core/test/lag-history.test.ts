import { describe, expect, test } from 'vitest';
import {
  LAG_HISTORY_BOUNDS_MS,
  LagAccumulator,
  lagBucket,
  lagQuantile,
  mergeLagMinutes,
  type LagMinute,
} from '../src/index.js';

const B = LAG_HISTORY_BOUNDS_MS;
const T0 = Date.parse('2026-12-03T10:00:00Z');

describe('lag buckets', () => {
  test('log-spaced from 1 ms to 1,000 s, ascending; a lag goes to the first bound at least it', () => {
    expect(B[0]).toBe(1);
    expect(B.at(-1)).toBe(1_000_000);
    for (let i = 1; i < B.length; i++) expect(B[i]!).toBeGreaterThan(B[i - 1]!);
    expect(lagBucket(0)).toBe(0);
    expect(lagBucket(1)).toBe(0);
    expect(lagBucket(1.01)).toBe(1);
    expect(lagBucket(7)).toBe(B.indexOf(7));
    expect(lagBucket(8)).toBe(B.indexOf(10));
    expect(lagBucket(2_000_000)).toBe(B.length);
  });
});

describe('lagQuantile', () => {
  const hist = (entries: [number, number][]) => {
    const b = new Array<number>(B.length + 1).fill(0);
    for (const [ms, n] of entries) b[lagBucket(ms)]! += n;
    return b;
  };

  test('interpolates within the bucket like histogram_quantile', () => {
    // 100 samples in (10, 15]: the median is halfway through it.
    expect(lagQuantile(0.5, hist([[12, 100]]), 15)).toBeCloseTo(12.5, 6);
    // The first bucket starts at 0.
    expect(lagQuantile(0.5, hist([[0.5, 10]]), 1)).toBeCloseTo(0.5, 6);
  });

  test('p50 and p99 of a two-mode distribution land in the right buckets', () => {
    const h = hist([
      [4, 98],
      [400, 2],
    ]);
    const p50 = lagQuantile(0.5, h, 400);
    const p99 = lagQuantile(0.99, h, 400);
    expect(p50).toBeGreaterThan(3);
    expect(p50).toBeLessThanOrEqual(5);
    expect(p99).toBeGreaterThan(300);
    expect(p99).toBeLessThanOrEqual(400);
  });

  test('never above the max; the overflow bucket interpolates up to it; empty is 0', () => {
    expect(lagQuantile(0.99, hist([[12, 100]]), 11)).toBe(11);
    expect(lagQuantile(0.5, hist([[3_000_000, 2]]), 3_000_000)).toBeCloseTo(2_000_000, 0);
    expect(lagQuantile(0.5, hist([]), 0)).toBe(0);
  });
});

describe('LagAccumulator', () => {
  test('counts per class and minute with sum and max; negative lags count as 0; drain empties', () => {
    const a = new LagAccumulator();
    a.observe('io', T0 + 1000, 12);
    a.observe('io', T0 + 59_999, -5);
    a.observe('io', T0 + 60_000, 3);
    a.observe('cpu', T0, 700);
    a.observe('cpu', T0, Number.NaN);
    expect(a.size).toBe(3);
    const rows = a.drain();
    expect(a.size).toBe(0);
    const io0 = rows.find((r) => r.resourceClass === 'io' && r.minuteMs === T0)!;
    expect(io0).toMatchObject({ count: 2, sumMs: 12, maxMs: 12 });
    expect(io0.buckets[lagBucket(12)]).toBe(1);
    expect(io0.buckets[0]).toBe(1);
    expect(rows.find((r) => r.resourceClass === 'cpu')).toMatchObject({ count: 1, maxMs: 700 });
  });

  test('restore merges unwritten rows with newer samples', () => {
    const a = new LagAccumulator();
    a.observe('io', T0, 10);
    const failed = a.drain();
    a.observe('io', T0 + 1, 20);
    a.restore(failed);
    const [row, ...rest] = a.drain();
    expect(rest).toHaveLength(0);
    expect(row).toMatchObject({ count: 2, sumMs: 30, maxMs: 20 });
  });

  test('bounded: past maxEntries the oldest minutes go, and are counted', () => {
    const a = new LagAccumulator(3);
    for (let m = 0; m < 5; m++) a.observe('io', T0 + m * 60_000, 1);
    expect(a.size).toBe(3);
    expect(a.dropped).toBe(2);
    expect(
      a
        .drain()
        .map((r) => r.minuteMs)
        .sort(),
    ).toEqual([T0 + 120_000, T0 + 180_000, T0 + 240_000]);
    expect(() => new LagAccumulator(0)).toThrow(RangeError);
  });
});

describe('mergeLagMinutes', () => {
  test('sums bucket counts across instances before the percentiles', () => {
    const a = new LagAccumulator();
    const b = new LagAccumulator();
    for (let i = 0; i < 99; i++) a.observe('io', T0, 2);
    b.observe('io', T0, 900);
    b.observe('io', T0 + 60_000, 5);
    b.observe('cpu', T0, 40);
    const rows: LagMinute[] = [...a.drain(), ...b.drain()];
    const points = mergeLagMinutes(rows);
    expect(points.map((p) => [p.resourceClass, p.minuteMs, p.count])).toEqual([
      ['cpu', T0, 1],
      ['io', T0, 100],
      ['io', T0 + 60_000, 1],
    ]);
    const io = points[1]!;
    expect(io.maxMs).toBe(900);
    expect(io.p50Ms).toBeGreaterThan(1.5);
    expect(io.p50Ms).toBeLessThanOrEqual(2);
    // Rank 99 of 100 is the last sample of the 2 ms bucket; p99 stays there, not at the outlier.
    expect(io.p99Ms).toBeLessThanOrEqual(2);
    // The inputs are not modified by merging.
    expect(rows[0]!.count).toBe(99);
  });
});
