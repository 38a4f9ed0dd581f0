import { expect, test } from 'vitest';
import { bothCopiesRead } from '../support/events-read.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('losing every hot-set key loses no job: the owner notices and rebuilds from PostgreSQL', async () => {
  const ns = await useNamespace('redis-loss');
  const p = await startPipeline(ns);
  const n = 200;
  const dueAt = Date.now() + 6000;
  const created = await p.commands.createJobs(
    Array.from({ length: n }, (_, i) => ({
      tenant: 'acme',
      type: 'loss.check',
      resource_class: 'default',
      payload: { i },
      due_at: new Date(dueAt + i * 10).toISOString(),
    })),
  );
  const sizes = async () => {
    let due = 0;
    for (let part = 0; part < ns.services.jobEventPartitions; part++)
      due += (await p.delayTier.hotSet.size(part)).due;
    return due;
  };
  await eventually('every job to reach the hot set', async () => (await sizes()) === n, 30_000);
  // Each event comes twice (outbox relay, then Debezium): wait until the tier has read the second
  // copies too, so none arrives after the loss below and makes the owner notice it early.
  await bothCopiesRead(ns, p, n);

  // Redis loses everything of this deployment (its keys; other tests share this Redis).
  const redis = ns.redis();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${ns.prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  // The client adds the prefix itself, so strip it before deleting.
  for (let i = 0; i < keys.length; i += 500)
    await redis.del(...keys.slice(i, i + 500).map((k) => k.slice(ns.prefix.length)));
  expect(await sizes()).toBe(0);
  await redis.quit();

  const ran = new Map<string, number>();
  const worker = p.worker();
  worker.handle('loss.check', (_payload, ctx) => void ran.set(ctx.jobId, (ran.get(ctx.jobId) ?? 0) + 1));
  await worker.start();
  await eventually(
    'every job to succeed',
    async () => {
      const r = await p.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE state = 'SUCCEEDED'`,
      );
      return r.rows[0]?.n === n;
    },
    60_000,
  );
  for (const { job } of created) expect(ran.get(job.id), job.id).toBeGreaterThanOrEqual(1);
  // Never early, even after the rebuild.
  const early = await p.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE dispatched_at < due_at`,
  );
  expect(early.rows[0]?.n).toBe(0);
});
