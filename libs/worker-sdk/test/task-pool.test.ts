import type { TaskDispatchRecord } from '@kairos/schemas';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { TaskPool, type RunOutcome, type Task, type TaskEnd } from '../src/task-pool.js';

function task(id: string, dueAt = 0, source = { revoked: false }, rc = 'default'): Task {
  return {
    dispatch: { job_id: id, due_at: dueAt, resource_class: rc } as TaskDispatchRecord,
    source,
    offset: id,
    traceparent: null,
    returns: 0,
  };
}

/** A task of a resource class, due now. */
const of = (rc: string, id: string) => task(id, 0, { revoked: false }, rc);

/** A pool whose runs last until released by hand. */
function setup(concurrency: number, reservedSlots?: Record<string, number>) {
  const started: string[] = [];
  const ended: [string, TaskEnd][] = [];
  const finish = new Map<string, (o: RunOutcome) => void>();
  const handlerDone = new Map<string, () => void>();
  const pool = new TaskPool({
    concurrency,
    ...(reservedSlots ? { reservedSlots } : {}),
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

describe('task pool with reserved slots', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const done = async (finish: Map<string, (o: RunOutcome) => void>, ...ids: string[]) => {
    for (const id of ids) finish.get(id)!({ end: 'done' });
    await vi.advanceTimersByTimeAsync(0);
  };

  test('a flood of one class fills the shared slots only: a reserved class still starts at once', async () => {
    const { pool, started, finish } = setup(4, { critical: 2 });
    for (let i = 0; i < 100; i++) pool.submit(of('default', `d${i}`));
    expect(started).toEqual(['d0', 'd1']); // the two shared slots
    pool.submit(of('critical', 'c0'));
    pool.submit(of('critical', 'c1'));
    expect(started.slice(2)).toEqual(['c0', 'c1']); // ahead of 98 queued default tasks
    expect(pool.slotsOf('critical')).toEqual({ reserved: 2, shared: 0 });
    expect(pool.slotsOf('default')).toEqual({ reserved: 0, shared: 2 });
    await done(finish, 'c0');
    expect(started.length).toBe(4); // a reserved slot freed: not default's
    await done(finish, 'd0');
    expect(started.at(-1)).toBe('d2');
  });

  test('shared slots serve every class in arrival order; a reserved class overflows into them', async () => {
    const { pool, started, finish } = setup(3, { critical: 1 });
    pool.submit(of('critical', 'c0')); // its reserved slot
    pool.submit(of('critical', 'c1')); // a shared one
    pool.submit(of('default', 'd0')); // the last shared one
    pool.submit(of('default', 'd1'));
    pool.submit(of('critical', 'c2'));
    pool.submit(of('default', 'd2'));
    expect(started).toEqual(['c0', 'c1', 'd0']);
    expect(pool.slotsOf('critical')).toEqual({ reserved: 1, shared: 1 });
    await done(finish, 'c1'); // a shared slot: the earliest queued task of all
    expect(started.at(-1)).toBe('d1');
    await done(finish, 'c0'); // critical's own slot: critical's next, ahead of an earlier default
    expect(started.at(-1)).toBe('c2');
    await done(finish, 'd0');
    expect(started.at(-1)).toBe('d2');
    expect(pool.running).toBe(3);
  });

  test('each class keeps its arrival order; a freed reserved slot goes to the head of its class', async () => {
    const { pool, started, finish } = setup(2, { critical: 1 });
    pool.submit(of('default', 'd0')); // the shared slot
    for (const id of ['c0', 'c1', 'c2']) pool.submit(of('critical', id));
    expect(started).toEqual(['d0', 'c0']);
    await done(finish, 'd0');
    await done(finish, 'c0');
    await done(finish, 'c1');
    expect(started).toEqual(['d0', 'c0', 'c1', 'c2']);
  });

  test('close() and revoked partitions abandon the queued tasks of every class', async () => {
    const { pool, ended, finish } = setup(2, { critical: 1 });
    const p0 = { revoked: false };
    pool.submit(task('c0', 0, p0, 'critical'));
    pool.submit(task('d0', 0, p0, 'default'));
    pool.submit(task('c1', 0, p0, 'critical'));
    pool.submit(task('d1', 0, { revoked: false }, 'default'));
    pool.submit(task('d2', 0, p0, 'default'));
    p0.revoked = true;
    pool.purgeRevoked();
    expect(ended.map(([id]) => id).sort()).toEqual(['c1', 'd2']);
    pool.close();
    expect(ended.map(([id]) => id).sort()).toEqual(['c1', 'd1', 'd2']);
    let idle = false;
    void pool.whenIdle().then(() => (idle = true));
    await done(finish, 'c0', 'd0');
    expect(idle).toBe(true);
    expect(ended.length).toBe(5); // each task ended exactly once
  });

  test('a task held for its due time takes no slot; once due it takes its reserved one', async () => {
    const { pool, started } = setup(2, { critical: 1 });
    pool.submit(of('default', 'd0'));
    pool.submit(of('default', 'd1'));
    pool.submit(task('c0', Date.now() + 1000, { revoked: false }, 'critical'));
    expect(started).toEqual(['d0']);
    expect([pool.early, pool.earlyOf('critical'), pool.earlyOf('default')]).toEqual([1, 1, 0]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(started).toEqual(['d0', 'c0']);
    expect(pool.earlyOf('critical')).toBe(0);
  });
});
