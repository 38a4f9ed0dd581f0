import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { GroupCommit, type GroupCommitOptions } from '../src/index.js';

/** A write the test finishes by hand (or `auto` answers at once): each call is recorded with its items. */
interface Call {
  readonly items: readonly string[];
  readonly finish: (results?: readonly string[]) => void;
}

class SharedFailure extends Error {}

function grouper(options: GroupCommitOptions = {}, auto?: (items: readonly string[]) => readonly string[]) {
  const calls: Call[] = [];
  const write = (items: readonly string[]): Promise<readonly string[]> => {
    if (auto) {
      calls.push({ items, finish: () => undefined });
      return Promise.resolve().then(() => auto(items));
    }
    return new Promise((resolve) =>
      calls.push({ items, finish: (results) => resolve(results ?? items.map((i) => `done:${i}`)) }),
    );
  };
  const group = new GroupCommit<string, string>(
    { write, sharedFailure: (err) => err instanceof SharedFailure },
    options,
  );
  return { group, calls };
}

/** Lets timers due in `ms` (and every immediate) run, settling the promises they resolve. */
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('GroupCommit', () => {
  test('creates of one event-loop turn, nothing being written: one write at the end of the turn, no wait', async () => {
    const { group, calls } = grouper({ maxWaitMs: 50 });
    const answers = ['a', 'b', 'c'].map((i) => group.add(i));
    expect(calls).toHaveLength(0); // not yet: others of this turn may still join
    await advance(0);
    expect(calls.map((c) => c.items)).toEqual([['a', 'b', 'c']]);
    calls[0]?.finish();
    expect(await Promise.all(answers)).toEqual(['done:a', 'done:b', 'done:c']);
    expect(group.stats).toEqual({ writes: 1, members: 3, retriedAlone: 0 });
  });

  test('while a write is in flight, later creates gather and go together as soon as it ends', async () => {
    const { group, calls } = grouper({ maxWaitMs: 50 });
    const first = group.add('a');
    await advance(0);
    expect(calls).toHaveLength(1);
    const later = ['b', 'c', 'd'].map((i) => group.add(i));
    await advance(10);
    expect(calls).toHaveLength(1); // waiting for the commit in flight, within maxWaitMs
    calls[0]?.finish();
    await advance(0);
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c', 'd']]);
    calls[1]?.finish();
    expect(await first).toBe('done:a');
    expect(await Promise.all(later)).toEqual(['done:b', 'done:c', 'done:d']);
  });

  test('the wait is bounded: a group is written after maxWaitMs even if an earlier write still runs', async () => {
    const { group, calls } = grouper({ maxWaitMs: 2 });
    void group.add('slow');
    await advance(0);
    void group.add('b');
    await advance(1);
    void group.add('c');
    await advance(0);
    expect(calls).toHaveLength(1);
    await advance(1); // 2 ms since 'b' arrived
    expect(calls.map((c) => c.items)).toEqual([['slow'], ['b', 'c']]);
  });

  test('a full group is written at once; the next creates start another', async () => {
    const { group, calls } = grouper({ maxWaitMs: 50, maxSize: 3 });
    void group.add('x');
    await advance(0);
    for (const i of ['a', 'b', 'c', 'd']) void group.add(i);
    expect(calls.map((c) => c.items)).toEqual([['x'], ['a', 'b', 'c']]); // no timer needed
    await advance(49);
    expect(calls).toHaveLength(2);
    await advance(1);
    expect(calls.map((c) => c.items)).toEqual([['x'], ['a', 'b', 'c'], ['d']]);
  });

  test('maxWaitMs 0 turns grouping off: every create is its own write, at once', async () => {
    const { group, calls } = grouper({ maxWaitMs: 0 }, (items) => items.map((i) => `done:${i}`));
    const answers = ['a', 'b'].map((i) => group.add(i));
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b']]);
    expect(await Promise.all(answers)).toEqual(['done:a', 'done:b']);
    expect(group.stats).toEqual({ writes: 2, members: 2, retriedAlone: 0 });
  });

  test('a failed group is retried member by member: only the culprit gets an error, its own', async () => {
    const culprit = new Error('violates check constraint');
    const { group, calls } = grouper({ maxWaitMs: 5 }, (items) => {
      if (items.includes('bad')) throw culprit;
      return items.map((i) => `done:${i}`);
    });
    const answers = ['a', 'bad', 'c'].map((i) => group.add(i).catch((err: unknown) => err));
    await advance(0);
    expect(calls.map((c) => c.items)).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
    expect(await Promise.all(answers)).toEqual(['done:a', culprit, 'done:c']);
    expect(group.stats).toEqual({ writes: 4, members: 3, retriedAlone: 3 });
  });

  test('a shared failure (connection lost) is reported to every member as it is, without retries', async () => {
    const lost = new SharedFailure('Connection terminated unexpectedly');
    const { group, calls } = grouper({ maxWaitMs: 5 }, () => {
      throw lost;
    });
    const answers = ['a', 'b', 'c'].map((i) => group.add(i).catch((err: unknown) => err));
    await advance(0);
    expect(calls).toHaveLength(1);
    expect(await Promise.all(answers)).toEqual([lost, lost, lost]);
    expect(group.stats.retriedAlone).toBe(0);
  });

  test('a member left without an answer by the write gets an error, the others theirs', async () => {
    const { group, calls } = grouper({}, (items) => items.slice(0, 1).map((i) => `done:${i}`));
    const answers = ['a', 'b'].map((i) => group.add(i).catch((err: unknown) => String(err)));
    await advance(0);
    expect(calls).toHaveLength(1);
    const [a, b] = await Promise.all(answers);
    expect(a).toBe('done:a');
    expect(b).toMatch(/fewer results than items/);
  });

  test('defaults: 2 ms and 100 per group', async () => {
    const { group, calls } = grouper();
    void group.add('first');
    await advance(0);
    for (let i = 0; i < 150; i++) void group.add(`m${i}`);
    expect(calls.map((c) => c.items.length)).toEqual([1, 100]);
    await advance(1);
    expect(calls).toHaveLength(2);
    await advance(1);
    expect(calls.map((c) => c.items.length)).toEqual([1, 100, 50]);
  });

  test('bad options: a RangeError naming the option', () => {
    const write = () => Promise.resolve([]);
    const deps = { write, sharedFailure: () => false };
    for (const [options, name] of [
      [{ maxWaitMs: -1 }, 'createGroup.maxWaitMs'],
      [{ maxWaitMs: 1.5 }, 'createGroup.maxWaitMs'],
      [{ maxWaitMs: 1001 }, 'createGroup.maxWaitMs'],
      [{ maxWaitMs: Number.NaN }, 'createGroup.maxWaitMs'],
      [{ maxSize: 0 }, 'createGroup.maxSize'],
      [{ maxSize: 1001 }, 'createGroup.maxSize'],
      [{ maxSize: 2.5 }, 'createGroup.maxSize'],
    ] as const) {
      expect(() => new GroupCommit(deps, options, 'createGroup'), JSON.stringify(options)).toThrow(
        RangeError,
      );
      expect(() => new GroupCommit(deps, options, 'createGroup')).toThrow(name);
    }
  });
});
