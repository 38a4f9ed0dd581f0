import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('a job is RUNNING while its handler runs: QUEUED once at dispatch, started_at and the attempt’s worker recorded at its start', async () => {
  const ns = await useNamespace('job-states');
  const p = await startPipeline(ns);
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  const started = new Set<string>();
  const worker = p.worker({ workerId: 'states-worker' });
  worker.handle('states.hold', async (_payload, ctx) => {
    started.add(ctx.jobId);
    await held;
  });
  await worker.start();
  const [created] = await p.commands.createJobs([
    { tenant: 'acme', type: 'states.hold', resource_class: 'default' },
  ]);
  const id = created!.job.id;

  await eventually('the handler to start', () => started.has(id));
  await eventually('the job to be RUNNING', async () => (await p.commands.getJob(id)).state === 'RUNNING');
  const running = await p.commands.getJob(id);
  expect(running.dispatchedAt).not.toBeNull();
  expect(running.startedAt).not.toBeNull();
  expect(running.startedAt!.getTime()).toBeGreaterThanOrEqual(running.dispatchedAt!.getTime());
  const attempt = await p.pool.query<{
    worker_id: string;
    dispatched_at: Date;
    epoch: string;
    outcome: string | null;
  }>('SELECT worker_id, dispatched_at, epoch, outcome FROM attempts WHERE job_id = $1', [id]);
  expect(attempt.rows).toEqual([
    expect.objectContaining({
      worker_id: 'states-worker',
      outcome: null,
      dispatched_at: running.dispatchedAt,
    }),
  ]);

  release();
  await eventually('the job to succeed', async () => (await p.commands.getJob(id)).state === 'SUCCEEDED');
  const done = await p.commands.getJob(id);
  expect(done.startedAt).toEqual(running.startedAt);
  const final = await p.pool.query<{ outcome: string; dispatched_at: Date }>(
    'SELECT outcome, dispatched_at FROM attempts WHERE job_id = $1',
    [id],
  );
  expect(final.rows).toEqual([{ outcome: 'SUCCEEDED', dispatched_at: running.dispatchedAt }]);
});
