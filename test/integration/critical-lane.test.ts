import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

/**
 * The delay tier dispatches `critical` in a lane of its own: a critical job due while another
 * class's round is stuck in its claim (here: a row of it locked by another transaction, standing
 * in for a round of thousands of jobs under a herd) is still dispatched, and nothing of the stuck
 * round goes out before its claim can proceed.
 */
test('a critical job is dispatched while a default round is held up in its claim', async () => {
  const ns = await useNamespace('critical-lane');
  const p = await startPipeline(ns);
  const dispatchedIds = () => new Set(p.dispatched.map((d) => d.record.job_id));
  const [slow] = (
    await p.commands.createJobs([
      {
        tenant: 'acme',
        type: 'batch.work',
        resource_class: 'default',
        payload: {},
        due_at: new Date(Date.now() + 3000).toISOString(),
      },
    ])
  ).map((r) => r.job.id);
  // Lock the default job's row before it is due: the dispatch claim that updates it waits.
  const blocker = await p.pool.connect();
  ns.defer(() => Promise.resolve(blocker.release()));
  const { rows: me } = await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await blocker.query('BEGIN');
  await blocker.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [slow]);
  ns.defer(() => blocker.query('ROLLBACK').then(() => undefined));
  await eventually('the default round to wait on the locked row', async () => {
    const { rows } = await p.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
      [me[0]?.pid],
    );
    return (rows[0]?.n ?? 0) > 0;
  });

  const [urgent] = (
    await p.commands.createJobs([
      { tenant: 'acme', type: 'urgent.work', resource_class: 'critical', payload: {} },
    ])
  ).map((r) => r.job.id);
  await eventually('the critical job to be dispatched', () => dispatchedIds().has(urgent ?? ''), 20_000);
  expect(dispatchedIds().has(slow ?? '')).toBe(false);

  // Released, the held-up round completes: the default job goes out, once.
  await blocker.query('ROLLBACK');
  await eventually('the default job to be dispatched', () => dispatchedIds().has(slow ?? ''), 20_000);
  expect(p.dispatched.filter((d) => d.record.job_id === slow)).toHaveLength(1);
});
