import { KairosError } from '@kairos/core';
import type { Logger } from '@kairos/observability';
import { describe, expect, test } from 'vitest';
import { OwnershipGuard } from '../src/ownership-guard.js';
import { PartitionModes } from '../src/partition-modes.js';

/** The guard with real partition modes, a recovery the test settles by hand, and its log lines. */
function setup() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const line = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    void lines.push({ level, msg, fields });
  const log = { warn: line('warn'), error: line('error') } as unknown as Logger;
  const stale: [number, number][] = [];
  let settle: ((err?: Error) => void) | undefined;
  const ownership = {
    onStale: (partition: number, epoch: number) => {
      stale.push([partition, epoch]);
      return new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
    },
  };
  const modes = new PartitionModes();
  return {
    guard: new OwnershipGuard({ ownership, modes, log }),
    modes,
    lines,
    stale,
    settle: (e?: Error) => settle?.(e),
  };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('OwnershipGuard', () => {
  test('hands back what the action returned', async () => {
    const { guard, stale, modes } = setup();
    expect(await guard.run(3, 7, () => Promise.resolve(42))).toEqual({ outcome: 'done', value: 42 });
    expect(stale).toEqual([]);
    expect(modes.fallbackPartitions()).toEqual([]);
  });

  test('STALE_EPOCH starts the recovery of that partition and epoch, in the background by default', async () => {
    const { guard, stale, settle } = setup();
    const r = await guard.run(3, 7, () => Promise.reject(new KairosError('STALE_EPOCH', 'stale')));
    expect(r).toEqual({ outcome: 'stale' });
    expect(stale).toEqual([[3, 7]]); // asked, and not waited for: the recovery is still open
    settle();
  });

  test('awaitRecovery waits for the recovery; a failed one is the caller’s error', async () => {
    const { guard, settle } = setup();
    let done = false;
    const running = guard
      .run(1, 2, () => Promise.reject(new KairosError('STALE_EPOCH', 'stale')), { awaitRecovery: true })
      .then((r) => ((done = true), r));
    await tick();
    expect(done).toBe(false);
    settle();
    expect(await running).toEqual({ outcome: 'stale' });
    const failing = guard.run(1, 2, () => Promise.reject(new KairosError('STALE_EPOCH', 'stale')), {
      awaitRecovery: true,
    });
    await tick();
    settle(new Error('PostgreSQL down'));
    await expect(failing).rejects.toThrow('PostgreSQL down');
  });

  test('a background recovery that fails is logged, not lost', async () => {
    const { guard, settle, lines } = setup();
    await guard.run(5, 9, () => Promise.reject(new KairosError('STALE_EPOCH', 'stale')));
    settle(new Error('PostgreSQL down'));
    await tick();
    expect(lines).toMatchObject([{ level: 'error', fields: { partition: 5 } }]);
    expect(lines[0]?.msg).toMatch(/recovering a stale partition failed/);
  });

  test('REDIS_OOM puts the partition in PostgreSQL-only mode, said once', async () => {
    const { guard, modes, lines, stale } = setup();
    const oom = () => Promise.reject(new KairosError('REDIS_OOM', 'refused'));
    expect(await guard.run(4, 1, oom)).toEqual({ outcome: 'oom' });
    expect(await guard.run(4, 1, oom)).toEqual({ outcome: 'oom' });
    expect(modes.fallbackPartitions()).toEqual([4]);
    expect(lines).toMatchObject([{ level: 'warn', fields: { partition: 4 } }]);
    expect(stale).toEqual([]);
  });

  test('any other error is the caller’s, with no policy applied', async () => {
    const { guard, modes, stale, lines } = setup();
    await expect(guard.run(2, 1, () => Promise.reject(new Error('Kafka down')))).rejects.toThrow(
      'Kafka down',
    );
    await expect(
      guard.run(2, 1, () => Promise.reject(new KairosError('UNDECODABLE', 'bad bytes'))),
    ).rejects.toThrow('bad bytes');
    expect([modes.fallbackPartitions(), stale, lines]).toEqual([[], [], []]);
  });
});
