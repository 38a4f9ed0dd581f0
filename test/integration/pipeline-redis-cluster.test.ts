import { expect, test } from 'vitest';
import type { TaskContext } from '@kairos/worker-sdk';
import { startRedisCluster, type RedisCluster } from '@kairos/ops';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { allSucceeded, createJobBatch } from '../support/job-batches.js';
import { RESOURCE_CLASSES, startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * The whole pipeline with a Redis Cluster instead of one Redis: the API, the delay tier (hot sets,
 * epochs, rate limits), the tracker's watchdog and the worker's leases all connect through the
 * seed list, as a deployment given KAIROS_REDIS_URL=<node>,<node>,<node> does.
 */

interface ClusterRun {
  readonly ns: Namespace;
  readonly cluster: RedisCluster;
  readonly p: Pipeline;
  /** Handler runs per job id; a run before the job's due time throws (and is never counted). */
  readonly runs: Map<string, number>;
}

async function onCluster(label: string): Promise<ClusterRun> {
  const ns = await useNamespace(label);
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
  return { ns, cluster, p, runs };
}

async function createJobs(p: Pipeline, n: number, dueAt: (i: number) => number): Promise<string[]> {
  return (await createJobBatch(p, 'cluster.work', n, dueAt)).map((r) => r.job.id);
}

test('jobs of every class, due now and soon, run once each with the delay tier and workers on a Redis Cluster', async () => {
  const { ns, cluster, p, runs } = await onCluster('pipeline-cluster');
  const now = Date.now();
  const ids = await createJobs(p, 60, (i) => now + (i % 3) * 1500);
  await allSucceeded(p, ids);
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

test('partitions resharded to another master while their jobs come due: every job runs once, none early', async () => {
  const { ns, cluster, p, runs } = await onCluster('pipeline-reshard');
  const now = Date.now();
  // 600 jobs due over 9 s from 3 s on: the moves below happen while they are scheduled and due.
  const ids = await createJobs(p, 600, (i) => now + 3000 + i * 15);
  const probe = cluster.client();
  const moved: number[] = [];
  try {
    const masters = cluster.nodes.slice(0, 3);
    for (const part of [0, 1, 2, 3]) {
      const slot = Number(await probe.cluster('KEYSLOT', `${ns.prefix}kairos:{${part}}:epoch`));
      const owner = await cluster.ownerOf(slot);
      const to = masters[(masters.indexOf(owner) + 1) % masters.length];
      if (!to) throw new Error('no other master');
      moved.push(await cluster.moveSlot(slot, to, { batch: 5, pauseMs: 100 }));
      expect(await cluster.ownerOf(slot)).toBe(to);
    }
  } finally {
    probe.disconnect();
  }
  await allSucceeded(p, ids);
  console.log(`[reshard] keys moved per partition: ${moved.join(', ')}`);
  expect(moved.every((n) => n > 0)).toBe(true);
  expect(ids.filter((id) => runs.get(id) !== 1)).toEqual([]);
});
