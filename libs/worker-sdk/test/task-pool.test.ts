import type { TaskDispatchRecord } from '@kairos/schemas';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { TaskPool, type RunOutcome, type Task, type TaskEnd } from '../src/task-pool.js';

function task(id: string, dueAt = 0, source = { revoked: false }): Task {
  return {
    dispatch: { job_id: id, due_at: dueAt } as TaskDispatchRecord,
    source,
    offset: id,
    traceparent: null,
  };
}

/** A pool whose runs last until released by hand. */
function setup(concurrency: number) {
  const started: string[] = [];
  const ended: [string, TaskEnd][] = [];
  const finish = new Map<string, (o: RunOutcome) => void>();
  const handlerDone = new Map<string, () => void>();
  const pool = new TaskPool({
    concurrency,
    run: (t, done) => {
      started.push(t.dispatch.job_id);
      handlerDone.set(t.dispatch.job_id, done);
      return new Promise<RunOutcome>((r) => finish.set(t.dispatch.job_id, r));
    },
    onEnd: (t, end) => ended.push([t.dispatch.job_id, end]),
    onEarlyChange: () => undefined,
    onError: () => undefined,
  });
  return { pool, started, ended, finish, handlerDone };
}

describe('task pool', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  test('a long task does not hold back the next one: it starts in a free slot at once', async () => {
    const { pool, started, ended, finish } = setup(2);
    pool.submit(task('long'));
    pool.submit(task('short'));
    expect(started).toEqual(['long', 'short']);
    finish.get('short')!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toEqual([['short', 'done']]);
    pool.submit(task('third'));
    expect(started).toEqual(['long', 'short', 'third']);
  });

  test('never early: a task is held until its due time, outside the slots', async () => {
    const { pool, started } = setup(1);
    const now = Date.now();
    pool.submit(task('later', now + 1000));
    pool.submit(task('now', now));
    expect(started).toEqual(['now']);
    expect(pool.early).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(started).toEqual(['now']);
    await vi.advanceTimersByTimeAsync(1);
    expect(pool.early).toBe(0);
  });

  test('a task that must wait is tried again later; close() abandons what has not started', async () => {
    const { pool, started, ended, finish } = setup(1);
    pool.submit(task('a'));
    pool.submit(task('b'));
    pool.submit(task('c', Date.now() + 60_000));
    finish.get('a')!({ againInMs: 250 }); // e.g. not admitted now
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b']);
    pool.close();
    expect(ended.map(([id, end]) => `${id}:${end}`).sort()).toEqual(['a:abandoned', 'c:abandoned']);
    let idle = false;
    void pool.whenIdle().then(() => (idle = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(idle).toBe(false); // b still runs
    finish.get('b')!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
    expect(idle).toBe(true);
    pool.submit(task('d'));
    expect(ended.at(-1)).toEqual(['d', 'abandoned']);
  });

  test('the tasks of a revoked partition that have not started are left to its next owner', async () => {
    const { pool, started, ended, finish } = setup(1);
    const p0 = { revoked: false };
    pool.submit(task('running', 0, p0));
    pool.submit(task('queued', 0, p0));
    pool.submit(task('other', 0));
    p0.revoked = true;
    pool.purgeRevoked();
    expect(ended).toEqual([['queued', 'abandoned']]);
    finish.get('running')!({ end: 'done' }); // a running task finishes here
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['running', 'other']);
  });

  test('a handler that returned frees its slot while its result is published; the task ends after', async () => {
    const { pool, started, ended, finish, handlerDone } = setup(1);
    pool.submit(task('a'));
    pool.submit(task('b'));
    expect(started).toEqual(['a']);
    handlerDone.get('a')!();
    handlerDone.get('a')!(); // once only: a second call frees nothing more
    expect(started).toEqual(['a', 'b']);
    expect(pool.running).toBe(1);
    pool.submit(task('c'));
    expect(started).toEqual(['a', 'b']); // b holds the one slot
    let idle = false;
    void pool.whenIdle().then(() => (idle = true));
    finish.get('b')!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['a', 'b', 'c']);
    finish.get('c')!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toEqual([
      ['b', 'done'],
      ['c', 'done'],
    ]);
    expect(idle).toBe(false); // a is still finishing
    finish.get('a')!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
    expect(ended.at(-1)).toEqual(['a', 'done']);
    expect(idle).toBe(true);
  });
});
