import { describe, expect, test } from 'vitest';
import { PollLoop } from '../src/index.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('PollLoop', () => {
  test('runs rounds back to back while they say more is waiting, then pauses', async () => {
    let rounds = 0;
    const loop = new PollLoop({
      round: () => Promise.resolve(++rounds < 5),
      intervalMs: 60_000,
      onError: () => {},
    });
    loop.start();
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
    loop.start();
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
    loop.start();
    while (rounds < 3) await new Promise((r) => setTimeout(r, 1));
    await loop.stop();
    expect(errors).toHaveLength(1);
    const long = new PollLoop({ round: () => Promise.resolve(), intervalMs: 3_600_000, onError: () => {} });
    long.start();
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
});
