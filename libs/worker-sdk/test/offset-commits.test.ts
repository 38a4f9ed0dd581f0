import type { PartitionOffset } from '@kairos/kafka';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { OffsetCommits } from '../src/offset-commits.js';

const assignment = (entries: Record<string, number[]>) =>
  new Map(Object.entries(entries).map(([t, ps]) => [t, new Set(ps)]));

function setup(fail = () => false) {
  const commits: PartitionOffset[][] = [];
  const errors: unknown[] = [];
  const c = new OffsetCommits({
    commit: (offsets) => {
      if (fail()) return Promise.reject(new Error('REBALANCE_IN_PROGRESS'));
      commits.push([...offsets]);
      return Promise.resolve();
    },
    intervalMs: 100,
    onError: (err) => errors.push(err),
  });
  return { c, commits, errors };
}

describe('offset commits', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  test('finishes within the interval share one commit of every partition that moved', async () => {
    const { c, commits } = setup();
    c.assign(assignment({ a: [0, 1] }));
    const a0 = c.watermark('a', 0)!;
    const a1 = c.watermark('a', 1)!;
    a0.accept('5');
    a0.accept('6');
    a1.accept('0');
    c.finished(a0, '5');
    await vi.advanceTimersByTimeAsync(0);
    expect(commits).toEqual([[{ topic: 'a', partition: 0, offset: '6' }]]);
    c.finished(a0, '6');
    c.finished(a1, '0');
    await vi.advanceTimersByTimeAsync(50);
    expect(commits).toHaveLength(1); // not before the interval
    await vi.advanceTimersByTimeAsync(50);
    expect(commits[1]).toEqual([
      { topic: 'a', partition: 0, offset: '7' },
      { topic: 'a', partition: 1, offset: '1' },
    ]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(commits).toHaveLength(2); // nothing moved: no commit (an idle worker commits nothing)
  });

  test('a partition not owned has no watermark; a revoked one is dropped and never committed', async () => {
    const { c, commits } = setup();
    c.assign(assignment({ a: [0, 1] }));
    expect(c.watermark('a', 2)).toBeUndefined();
    const a0 = c.watermark('a', 0)!;
    const a1 = c.watermark('a', 1)!;
    a0.accept('0');
    a1.accept('0');
    const revoked = c.assign(assignment({ a: [1] }));
    expect(revoked).toEqual([a0]);
    expect(a0.revoked).toBe(true);
    c.finished(a0, '0'); // its task still finishes here: its result goes out, its offset does not
    c.finished(a1, '0');
    await c.flush();
    expect(commits).toEqual([[{ topic: 'a', partition: 1, offset: '1' }]]);
    // Back to this worker later: a new watermark, from what the group delivers.
    c.assign(assignment({ a: [0, 1] }));
    expect(c.watermark('a', 0)).not.toBe(a0);
  });

  test('a refused commit is retried after the interval', async () => {
    let refuse = true;
    const { c, commits, errors } = setup(() => refuse);
    c.assign(assignment({ a: [0] }));
    const a0 = c.watermark('a', 0)!;
    a0.accept('0');
    c.finished(a0, '0');
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    refuse = false;
    await vi.advanceTimersByTimeAsync(100);
    expect(commits).toEqual([[{ topic: 'a', partition: 0, offset: '1' }]]);
  });
});
