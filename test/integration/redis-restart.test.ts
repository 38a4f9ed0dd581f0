import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { startRedisServer } from '../support/redis-server.js';

test('a Redis restart and a FLUSHALL during a run lose no job and run none twice or early', async () => {
  const ns = await useNamespace('redis-restart');
  // A private Redis: the shared one is not ours to restart or flush.
  const server = await startRedisServer();
  ns.defer(() => server.stop());
  const p = await startPipeline(ns, { services: { redisUrl: server.url } });
  const runs = new Map<string, number[]>();
  const worker = p.worker();
  worker.handle('restart.check', (_payload, ctx) => {
    runs.set(ctx.jobId, [...(runs.get(ctx.jobId) ?? []), Date.now()]);
  });
  await worker.start();

  const t0 = Date.now();
  const jobs = (
    await Promise.all(
      [0, 1, 2].map((b) =>
        p.commands.createJobs(
          Array.from({ length: 200 }, (_, i) => ({
            tenant: `tenant-${i % 3}`,
            type: 'restart.check',
            resource_class: ['critical', 'default', 'io'][i % 3]!,
            due_at: new Date(t0 + 1000 + (b * 200 + i) * 20).toISOString(), // over 12 s
          })),
        ),
      ),
    )
  ).flat();
  const due = new Map(jobs.map((r) => [r.job.id, r.job.dueAt.getTime()]));

  await eventually('a first share of jobs to run', () => runs.size >= 100, 30_000);
  await server.restart(); // the process dies with every key; a new one starts empty
  await eventually('more jobs to run after the restart', () => runs.size >= 300, 60_000);
  const flusher = server.client();
  await flusher.flushall();
  await flusher.quit();

  await eventually('every job to run', () => runs.size === jobs.length, 60_000);
  const twice = [...runs].filter(([, starts]) => starts.length > 1).map(([id]) => id);
  expect(twice).toEqual([]);
  const early = [...runs].filter(([id, starts]) => starts[0]! < due.get(id)!).map(([id]) => id);
  expect(early).toEqual([]);
  await eventually(
    'every job to be recorded SUCCEEDED',
    async () => {
      const r = await p.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM jobs WHERE state = 'SUCCEEDED'",
      );
      return r.rows[0]?.n === jobs.length;
    },
    30_000,
  );
});
