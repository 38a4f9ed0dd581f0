import { expect, test } from 'vitest';
import type { TaskContext } from '@kairos/worker-sdk';
import { startRedisCluster } from '@kairos/ops';
import { useNamespace } from '../support/namespace.js';
import { eventually, RESOURCE_CLASSES, startPipeline } from '../support/pipeline.js';

/**
 * The whole pipeline with a Redis Cluster instead of one Redis: the API, the delay tier (hot sets,
 * epochs, rate limits), the tracker's watchdog and the worker's leases all connect through the
 * seed list, as a deployment given KAIROS_REDIS_URL=<node>,<node>,<node> does.
 */
test('jobs of every class, due now and soon, run once each with the delay tier and workers on a Redis Cluster', async () => {
  const ns = await useNamespace('pipeline-cluster');
  const cluster = await startRedisCluster({ masters: 3 });
  ns.defer(() => cluster.stop());
  const p = await startPipeline(ns, { services: { redisUrl: cluster.url } });
  const runs = new Map<string, number>();
  const worker = p.worker({ resourceClasses: RESOURCE_CLASSES, concurrency: 20, shutdownTimeoutMs: 500 });
  worker.handle('cluster.work', (_payload: unknown, ctx: TaskContext) => {
    if (Date.now() < ctx.dueAt.getTime()) throw new Error(`${ctx.jobId} started before due`);
    runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
  });
  await worker.start();
  const now = Date.now();
  const created = await p.commands.createJobs(
    Array.from({ length: 60 }, (_, i) => ({
      tenant: `t${i % 4}`,
      type: 'cluster.work',
      resource_class: RESOURCE_CLASSES[i % RESOURCE_CLASSES.length] ?? 'default',
      payload: {},
      due_at: new Date(now + (i % 3) * 1500).toISOString(),
    })),
  );
  const ids = created.map((r) => r.job.id);
  await eventually('every job to succeed', async () => {
    const { rows } = await p.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
      [ids],
    );
    return rows[0]?.n === ids.length;
  });
  expect(ids.every((id) => runs.get(id) === 1)).toBe(true);
  // Every partition's epoch and hot set live in the cluster (none in the stack's own Redis).
  const probe = cluster.client();
  try {
    const epochs = await Promise.all(
      Array.from({ length: ns.services.jobEventPartitions }, (_, part) =>
        probe.get(`${ns.prefix}kairos:{${part}}:epoch`),
      ),
    );
    expect(epochs.every((e) => e !== null)).toBe(true);
  } finally {
    probe.disconnect();
  }
});
