import { describe, expect, test } from 'vitest';
import { Lifecycle, PollLoop, serviceGroup, type Service } from '../src/index.js';

/** A service that records its steps in `log` and fails where told. */
function recorded(name: string, log: string[], fail: { start?: boolean; stop?: boolean } = {}): Lifecycle {
  return new Lifecycle(name, {
    start: async () => {
      await Promise.resolve();
      log.push(`start ${name}`);
      if (fail.start) throw new Error(`${name} would not start`);
    },
    stop: () => {
      log.push(`stop ${name}`);
      if (fail.stop) throw new Error(`${name} would not stop`);
    },
  });
}

describe('Lifecycle', () => {
  test('goes idle → starting → started → stopping → stopped', async () => {
    let release: (() => void) | undefined;
    const seen: string[] = [];
    const s: Lifecycle = new Lifecycle('svc', {
      start: () => new Promise<void>((r) => (release = r)),
      stop: () => void seen.push(s.state),
    });
    expect(s.state).toBe('idle');
    const starting = s.start();
    expect(s.state).toBe('starting');
    release?.();
    await starting;
    expect(s.state).toBe('started');
    await s.stop();
    expect(seen).toEqual(['stopping']);
    expect(s.state).toBe('stopped');
  });

  test('start twice is one start; stop twice is one stop; stop of an idle service runs nothing', async () => {
    const log: string[] = [];
    const s = recorded('a', log);
    await Promise.all([s.start(), s.start()]);
    await Promise.all([s.stop(), s.stop()]);
    await s.stop();
    expect(log).toEqual(['start a', 'stop a']);
    const idle = recorded('b', log);
    await idle.stop();
    expect(idle.state).toBe('stopped');
    expect(log).toEqual(['start a', 'stop a']);
  });

  test('start after stop is refused with a clear error', async () => {
    const s = recorded('tier', []);
    await s.start();
    await s.stop();
    await expect(s.start()).rejects.toThrow('tier cannot start: it is stopped');
    const never = recorded('never', []);
    await never.stop();
    await expect(never.start()).rejects.toThrow(/never cannot start/);
  });

  test('a failed start leaves it failed; stop then runs the stop step to release what it held', async () => {
    const log: string[] = [];
    const s = recorded('a', log, { start: true });
    await expect(s.start()).rejects.toThrow('a would not start');
    expect(s.state).toBe('failed');
    await s.stop();
    expect(s.state).toBe('stopped');
    expect(log).toEqual(['start a', 'stop a']);
  });

  test('a stop during the start waits for it, then stops', async () => {
    const log: string[] = [];
    const s = recorded('a', log);
    const starting = s.start();
    const stopping = s.stop();
    await Promise.all([starting, stopping]);
    expect(log).toEqual(['start a', 'stop a']);
    expect(s.state).toBe('stopped');
  });

  test('a failed stop leaves it failed and rethrows', async () => {
    const s = recorded('a', [], { stop: true });
    await s.start();
    await expect(s.stop()).rejects.toThrow('a would not stop');
    expect(s.state).toBe('failed');
  });
});

describe('serviceGroup', () => {
  test('starts in dependency order and stops in reverse', async () => {
    const log: string[] = [];
    const parts = ['producer', 'consumer', 'dispatcher'].map((n) => recorded(n, log));
    const group = serviceGroup('tier', parts);
    await group.start();
    expect(parts.map((p) => p.state)).toEqual(['started', 'started', 'started']);
    await group.stop();
    expect(log).toEqual([
      'start producer',
      'start consumer',
      'start dispatcher',
      'stop dispatcher',
      'stop consumer',
      'stop producer',
    ]);
    expect(group.state).toBe('stopped');
  });

  test('a failed start stops what already started (and the failed one), in reverse, then rethrows', async () => {
    const log: string[] = [];
    const later = recorded('reaper', log);
    const group = serviceGroup('tier', [
      recorded('producer', log),
      recorded('consumer', log, { start: true }),
      later,
    ]);
    await expect(group.start()).rejects.toThrow('consumer would not start');
    expect(group.state).toBe('failed');
    expect(later.state).toBe('idle');
    expect(log).toEqual(['start producer', 'start consumer', 'stop consumer', 'stop producer']);
    await group.stop(); // nothing left to stop
    expect(log).toHaveLength(4);
    expect(group.state).toBe('stopped');
  });

  test('a failed stop still stops the others, then rethrows', async () => {
    const log: string[] = [];
    const group = serviceGroup('tier', [
      recorded('a', log),
      recorded('b', log, { stop: true }),
      recorded('c', log),
    ]);
    await group.start();
    await expect(group.stop()).rejects.toThrow('b would not stop');
    expect(log.slice(3)).toEqual(['stop c', 'stop b', 'stop a']);
  });

  test('groups nest, and poll loops are services', async () => {
    let rounds = 0;
    const loop: Service = new PollLoop({
      round: () => Promise.resolve(void rounds++),
      intervalMs: 60_000,
      onError: () => {},
    });
    const inner = serviceGroup('loops', [loop]);
    const outer = serviceGroup('app', [recorded('client', []), inner]);
    await outer.start();
    expect([inner.state, loop.state]).toEqual(['started', 'started']);
    await outer.stop();
    expect([outer.state, inner.state, loop.state]).toEqual(['stopped', 'stopped', 'stopped']);
    expect(rounds).toBe(1);
    await expect(loop.start()).rejects.toThrow('poll loop cannot start: it is stopped');
  });
});
