import { describe, expect, test, vi } from 'vitest';
import { IdleBackoff, PollLoop } from '../src/index.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('PollLoop', () => {
  test('runs rounds back to back while they say more is waiting, then pauses', async () => {
    let rounds = 0;
    const loop = new PollLoop({
      round: () => Promise.resolve(++rounds < 5),
      intervalMs: 60_000,
      onError: () => {},
    });
    await loop.start();
    for (let i = 0; i < 20; i++) await tick();
    expect(rounds).toBe(5); // the fifth said "idle": now it waits out the interval
    loop.wake();
    for (let i = 0; i < 5; i++) await tick();
    expect(rounds).toBe(6);
    await loop.stop();
    expect(loop.running).toBe(false);
  });

  test('a wake during a round skips the next pause', async () => {
    let rounds = 0;
    let release: (() => void) | undefined;
    const loop = new PollLoop({
      round: () =>
        new Promise<void>((r) => {
          rounds++;
          release = r;
        }),
      intervalMs: 60_000,
      onError: () => {},
    });
    await loop.start();
    await tick();
    expect(rounds).toBe(1);
    loop.wake(); // the first round is still running
    release?.();
    for (let i = 0; i < 5; i++) await tick();
    expect(rounds).toBe(2); // no pause in between
    release?.();
    for (let i = 0; i < 5; i++) await tick();
    expect(rounds).toBe(2); // now it pauses
    const stopping = loop.stop();
    await stopping;
  });

  test('a failing round is reported and the loop goes on; stop ends a pause at once', async () => {
    const errors: unknown[] = [];
    let rounds = 0;
    const loop = new PollLoop({
      round: () => {
        rounds++;
        return rounds === 1 ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
      intervalMs: 0,
      onError: (e) => errors.push(e),
    });
    await loop.start();
    while (rounds < 3) await new Promise((r) => setTimeout(r, 1));
    await loop.stop();
    expect(errors).toHaveLength(1);
    const long = new PollLoop({ round: () => Promise.resolve(), intervalMs: 3_600_000, onError: () => {} });
    await long.start();
    await tick();
    const t0 = Date.now();
    await long.stop();
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('rejects a negative interval', () => {
    expect(
      () => new PollLoop({ round: () => Promise.resolve(true), intervalMs: -1, onError: () => {} }),
    ).toThrow(/intervalMs/);
  });

  test('sleeps until the deadline a round returns, not a fixed interval', async () => {
    const starts: number[] = [];
    const loop = new PollLoop({
      round: () => {
        starts.push(performance.now());
        return Promise.resolve(starts.length === 1 ? 80 : 3_600_000);
      },
      intervalMs: 1,
      onError: () => {},
    });
    // Fake timers: the gap is the loop's arithmetic, not how busy the machine running the test is.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      await loop.start();
      await vi.advanceTimersByTimeAsync(40);
      expect(starts).toHaveLength(1); // 40 ms in, the 80 ms deadline has not come
      await vi.advanceTimersByTimeAsync(80);
      expect(starts).toHaveLength(2);
      const gap = (starts[1] ?? 0) - (starts[0] ?? 0);
      expect(gap).toBeGreaterThanOrEqual(79);
      expect(gap).toBeLessThan(82);
      await loop.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  test('wakeIn shortens a pause, never lengthens it; one asked for during a round is kept', async () => {
    let rounds = 0;
    let release: (() => void) | undefined;
    const loop = new PollLoop({
      round: () =>
        new Promise<number>((r) => {
          rounds++;
          release = () => r(3_600_000);
        }),
      intervalMs: 1,
      onError: () => {},
    });
    await loop.start();
    await tick();
    expect(rounds).toBe(1);
    loop.wakeIn(30); // during the round: the hour's pause after it becomes 30 ms
    release?.();
    await new Promise((r) => setTimeout(r, 10));
    expect(rounds).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(rounds).toBe(2);
    release?.(); // now pausing for an hour
    await tick();
    loop.wakeIn(20);
    loop.wakeIn(3_000_000); // later than the pause already armed: no effect
    await new Promise((r) => setTimeout(r, 50));
    expect(rounds).toBe(3);
    const stopping = loop.stop(); // stops once the running round ends
    release?.();
    await stopping;
  });

  test('a wake between a round ending and its pause starting is not lost', async () => {
    let rounds = 0;
    const loop = new PollLoop({
      round: () => {
        rounds++;
        // The wake lands after the round's result is settled, before the loop goes to sleep.
        if (rounds === 1) queueMicrotask(() => loop.wake());
        return Promise.resolve(3_600_000);
      },
      intervalMs: 1,
      onError: () => {},
    });
    await loop.start();
    for (let i = 0; i < 10; i++) await tick();
    expect(rounds).toBe(2);
    await loop.stop();
  });

  test('stop during a long computed sleep returns at once', async () => {
    const loop = new PollLoop({ round: () => Promise.resolve(3_600_000), intervalMs: 1, onError: () => {} });
    await loop.start();
    await tick();
    const t0 = Date.now();
    await loop.stop();
    expect(Date.now() - t0).toBeLessThan(100);
    expect(loop.running).toBe(false);
  });

  test('idle rounds back off up to maxIntervalMs; a wake starts again from the short pause', async () => {
    const starts: number[] = [];
    const loop = new PollLoop({
      round: () => {
        starts.push(performance.now());
        return Promise.resolve();
      },
      intervalMs: 10,
      maxIntervalMs: 40,
      onError: () => {},
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      await loop.start();
      await vi.advanceTimersByTimeAsync(200);
      const gaps = starts.slice(1).map((t, i) => t - (starts[i] ?? 0));
      // 10, 20, 40, 40, ...: never shorter than the back-off says, never longer than its cap.
      expect(gaps[0]).toBeGreaterThanOrEqual(9);
      expect(gaps[1]).toBeGreaterThanOrEqual(19);
      expect(gaps[2]).toBeGreaterThanOrEqual(39);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(41);
      expect(starts.length).toBeLessThan(10);
      await loop.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  test('a non-finite deadline counts as idle (no spin)', async () => {
    let rounds = 0;
    const loop = new PollLoop({
      round: () => Promise.resolve(++rounds % 2 === 0 ? Number.NaN : Infinity),
      intervalMs: 50,
      onError: () => {},
    });
    await loop.start();
    await new Promise((r) => setTimeout(r, 30));
    expect(rounds).toBe(1);
    await loop.stop();
  });

  test('rejects a maxIntervalMs below intervalMs', () => {
    expect(
      () =>
        new PollLoop({ round: () => Promise.resolve(), intervalMs: 10, maxIntervalMs: 5, onError: () => {} }),
    ).toThrow(/maxIntervalMs/);
  });
});

describe('IdleBackoff', () => {
  test('doubles on idle rounds up to its cap, resets on work or reset()', () => {
    const b = new IdleBackoff(100, 1000);
    expect([b.next(true), b.next(true), b.next(true), b.next(true), b.next(true)]).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    expect(b.next(false)).toBe(100);
    b.next(true);
    b.reset();
    expect(b.next(true)).toBe(100);
    const zero = new IdleBackoff(0, 4);
    expect([zero.next(true), zero.next(true), zero.next(true), zero.next(true)]).toEqual([0, 1, 2, 4]);
    expect(() => new IdleBackoff(10, 5)).toThrow(RangeError);
  });
});
