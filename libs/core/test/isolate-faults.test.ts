import { describe, expect, test } from 'vitest';
import { applyIsolatingFaults } from '@kairos/core';

class Fault extends Error {}
const isFault = (err: unknown) => err instanceof Fault;

/** An apply that fails as a whole when any item is bad, like one transaction; records what it applied. */
function store(bad: ReadonlySet<number>, down = false) {
  const applied: number[] = [];
  const apply = (items: readonly number[]) => {
    if (down) return Promise.reject(new Error('connection refused'));
    if (items.some((i) => bad.has(i))) return Promise.reject(new Fault(`bad ${items.join(',')}`));
    applied.push(...items);
    return Promise.resolve();
  };
  return { applied, apply };
}

describe('applyIsolatingFaults', () => {
  test('a good batch is applied in one call', async () => {
    const s = store(new Set());
    const aside: number[] = [];
    await applyIsolatingFaults([1, 2, 3], s.apply, isFault, (i) => Promise.resolve(void aside.push(i)));
    expect(s.applied).toEqual([1, 2, 3]);
    expect(aside).toEqual([]);
  });

  test('one bad record is set aside and the others are applied', async () => {
    const s = store(new Set([2, 4]));
    const aside: [number, string][] = [];
    await applyIsolatingFaults([1, 2, 3, 4, 5], s.apply, isFault, (i, err) =>
      Promise.resolve(void aside.push([i, (err as Error).message])),
    );
    expect(s.applied).toEqual([1, 3, 5]);
    expect(aside).toEqual([
      [2, 'bad 2'],
      [4, 'bad 4'],
    ]);
  });

  test('a failure that is not a record fault is thrown, nothing set aside', async () => {
    const s = store(new Set([2]), true);
    const aside: number[] = [];
    await expect(
      applyIsolatingFaults([1, 2], s.apply, isFault, (i) => Promise.resolve(void aside.push(i))),
    ).rejects.toThrow(/connection refused/);
    expect(aside).toEqual([]);
  });
});
