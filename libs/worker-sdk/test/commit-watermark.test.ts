import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { PartitionWatermark } from '../src/commit-watermark.js';

const take = (w: PartitionWatermark, ...offsets: number[]) => offsets.map((o) => w.accept(String(o)));

describe('commit watermark of a partition', () => {
  test('out-of-order finishes commit in order: only below the first unfinished task', () => {
    const w = new PartitionWatermark('t', 0);
    expect(w.due()).toBeUndefined(); // nothing taken
    expect(take(w, 10, 11, 12, 13)).toEqual(['new', 'new', 'new', 'new']);
    expect(w.due()).toBeUndefined(); // nothing finished: the start needs no commit
    expect(w.finish('12')).toBe(false); // 10 and 11 still run
    expect(w.finish('13')).toBe(false);
    expect(w.due()).toBeUndefined();
    expect(w.finish('10')).toBe(true);
    expect(w.due()).toBe('11'); // 11 is the first unfinished: read again from it
    w.committed('11');
    expect(w.due()).toBeUndefined();
    expect(w.finish('11')).toBe(true);
    expect(w.due()).toBe('14'); // all finished: past the last one
    expect(w.unfinished).toBe(0);
  });

  test('a committed position never goes back, and an unknown or repeated finish changes nothing', () => {
    const w = new PartitionWatermark('t', 0);
    take(w, 0, 1);
    w.finish('0');
    w.committed('1');
    w.committed('0');
    expect(w.due()).toBeUndefined();
    expect(w.finish('0')).toBe(false);
    expect(w.finish('7')).toBe(false);
    expect(w.position).toBe(1n);
  });

  test('gaps between offsets (compaction, control records) are stepped over', () => {
    const w = new PartitionWatermark('t', 3);
    take(w, 5, 9, 20);
    w.finish('5');
    expect(w.due()).toBe('9');
    w.finish('20');
    expect(w.due()).toBe('9');
    w.finish('9');
    expect(w.due()).toBe('21');
  });

  test('a redelivery after a rebalance that kept the partition: running and finished tasks are not new', () => {
    const w = new PartitionWatermark('t', 1);
    take(w, 100, 101, 102);
    w.finish('100');
    w.finish('102');
    // The group reads again from the committed position (100): nothing runs twice.
    expect(take(w, 100, 101, 102, 103)).toEqual(['finished', 'running', 'finished', 'new']);
    expect(w.position).toBe(101n);
    w.finish('101');
    w.finish('103');
    expect(w.due()).toBe('104');
  });

  test('read again from below the first offset taken: those are new, and the watermark waits for them', () => {
    const w = new PartitionWatermark('t', 1);
    take(w, 50, 51);
    w.finish('50');
    w.finish('51');
    w.committed('52');
    expect(take(w, 48, 49, 50, 51, 52)).toEqual(['new', 'new', 'new', 'new', 'new']);
    expect(w.position).toBe(48n);
    expect(w.due()).toBeUndefined(); // below what is committed already
    for (const o of ['48', '49', '50', '51']) w.finish(o);
    expect(w.due()).toBeUndefined();
    w.finish('52');
    expect(w.due()).toBe('53');
  });

  test('many tasks: what is behind the watermark is dropped, the order is kept', () => {
    const w = new PartitionWatermark('t', 0);
    const n = 5000;
    for (let i = 0; i < n; i++) w.accept(String(i));
    for (let i = 0; i < n - 1; i++) w.finish(String(i));
    expect(w.position).toBe(BigInt(n - 1));
    w.accept(String(n));
    w.finish(String(n));
    expect(w.position).toBe(BigInt(n - 1));
    w.finish(String(n - 1));
    expect(w.due()).toBe(String(n + 1));
  });

  test('property: the position is always the lowest unfinished offset taken, or one past the last', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 200 }),
        fc.infiniteStream(fc.nat()),
        (raw, picks) => {
          const offsets = [...raw].sort((a, b) => a - b);
          const w = new PartitionWatermark('t', 0);
          for (const o of offsets) expect(w.accept(String(o))).toBe('new');
          const open = new Set(offsets);
          const it = picks[Symbol.iterator]();
          while (open.size > 0) {
            const list = [...open];
            const o = list[(it.next().value as number) % list.length] as number;
            w.finish(String(o));
            open.delete(o);
            const lowest = Math.min(...open);
            const expected = open.size > 0 ? lowest : Math.max(...offsets) + 1;
            expect(w.position).toBe(BigInt(expected));
            // Nothing unfinished is ever below the position to commit.
            for (const u of open) expect(BigInt(u) >= (w.position ?? 0n)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
