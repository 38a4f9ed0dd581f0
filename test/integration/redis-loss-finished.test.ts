/**
 * "A finished job never runs again, whatever Redis lost" (issue 32): jobs run to the end, others
 * wait on a class no worker reads yet, Redis loses every key of the deployment, the old worker
 * service is retired (its group deleted, so nothing tells a new group where to start) and a
 * brand-new group on both classes reads the task topics from their beginning. It must run none of
 * the finished jobs, change none of their rows, and run each waiting job exactly once.
 */
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

const FINISHED = 60;
const WAITING = 20;

test('after Redis lost its data, a brand-new worker group runs no finished job again and changes no finished row', async () => {
  const ns = await useNamespace('redis-loss-finished');
  const p = await startPipeline(ns);
  const create = (type: string, resourceClass: string, n: number) =>
    p.commands.createJobs(
      Array.from({ length: n }, (_, i) => ({
        tenant: 'acme',
        type,
        resource_class: resourceClass,
        payload: { i },
        due_at: new Date(Date.now() + 500).toISOString(),
      })),
    );
  const count = async (where: string): Promise<number> =>
    (await p.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE ${where}`)).rows[0]?.n ??
    -1;

  const first = p.worker({ resourceClasses: ['default'] });
  first.handle('loss.done', () => undefined);
  await first.start();
  const finished = await create('loss.done', 'default', FINISHED);
  await eventually(
    'the first jobs to succeed',
    async () => (await count(`state = 'SUCCEEDED'`)) === FINISHED,
    60_000,
  );
  const waiting = await create('loss.waiting', 'io', WAITING);
  await eventually(
    'the io jobs to be dispatched',
    async () => (await count(`state = 'QUEUED'`)) === WAITING,
    60_000,
  );
  await first.stop();
  const snapshot = `SELECT j.id, to_jsonb(j.*) AS job,
      (SELECT jsonb_agg(to_jsonb(a.*) ORDER BY a.fence) FROM attempts a WHERE a.job_id = j.id) AS attempts
    FROM jobs j WHERE j.state = 'SUCCEEDED' ORDER BY j.id`;
  const before = (await p.pool.query(snapshot)).rows;
  expect(before).toHaveLength(FINISHED);

  // Redis loses every key of this deployment (other tests share the server), as a FLUSHALL does.
  const redis = ns.redis();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${ns.prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys.map((k) => k.slice(ns.prefix.length)));
  } while (cursor !== '0');
  await redis.quit();
  // The old service is retired: no committed offset is left to start a new group from.
  const admin = ns.admin();
  await admin.connect();
  await admin.deleteGroups([`${ns.prefix}kairos-workers.default`]);

  const calls = new Map<string, number>();
  const count1 = (_: unknown, ctx: { jobId: string }) =>
    void calls.set(ctx.jobId, (calls.get(ctx.jobId) ?? 0) + 1);
  const groupId = `${ns.prefix}a-new-service`;
  const second = p.worker({ resourceClasses: ['default', 'io'], groupId });
  second.handle('loss.done', count1);
  second.handle('loss.waiting', count1);
  await second.start();
  await eventually(
    'the waiting jobs to succeed',
    async () => (await count(`state = 'SUCCEEDED'`)) === FINISHED + WAITING,
    60_000,
  );
  // The new group read every old task of class default (and committed past it) before we judge.
  const topic = p.topics.tasks('default');
  await eventually(
    'the new group to have read the whole default task topic',
    async () => {
      const [ends, [committed]] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      return ends.every(
        (e) =>
          Number(committed?.partitions.find((c) => c.partition === e.partition)?.offset ?? -1) >=
          Number(e.high),
      );
    },
    60_000,
  );
  await second.stop();
  await admin.disconnect();

  for (const { job } of finished)
    expect(calls.get(job.id) ?? 0, `handler calls for finished ${job.id}`).toBe(0);
  for (const { job } of waiting) expect(calls.get(job.id), `handler calls for waiting ${job.id}`).toBe(1);
  const after = (await p.pool.query(snapshot)).rows.filter((r: { id: string }) =>
    before.some((b: { id: string }) => b.id === r.id),
  );
  expect(after).toEqual(before);
});

test('a partial key loss after the restore loses no waiting job: a lost restore mark is noticed, a lost attempt is checked against PostgreSQL', async () => {
  const ns = await useNamespace('redis-loss-partial');
  const p = await startPipeline(ns);
  const n = 10;
  const created = await p.commands.createJobs(
    Array.from({ length: n }, (_, i) => ({
      tenant: 'acme',
      type: 'loss.partial',
      resource_class: 'io',
      payload: { i },
      due_at: new Date(Date.now() + 500).toISOString(),
    })),
  );
  const jobs = async () =>
    (
      await p.pool.query<{ state: string; attempt: number; fence: number }>(
        'SELECT state, attempt, fence FROM jobs ORDER BY id',
      )
    ).rows;
  await eventually('the jobs to wait QUEUED (no io worker yet)', async () =>
    (await jobs()).every((j) => j.state === 'QUEUED'),
  );
  const redis = ns.redis();
  const keysOf = async (pattern: string) => {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${ns.prefix}${pattern}`, 'COUNT', 1000);
      cursor = next;
      out.push(...keys.map((k) => k.slice(ns.prefix.length)));
    } while (cursor !== '0');
    return out;
  };
  const partitions = ns.services.jobEventPartitions;
  const restored = async () => (await keysOf('kairos:{*}:since')).length === partitions;
  await eventually('every partition to be marked restored', restored);
  // 1. The restore marks go, the epochs stay: the owner notices and restores under a new epoch.
  const epochsBefore = await Promise.all((await keysOf('kairos:{*}:epoch')).map((k) => redis.get(k)));
  await redis.del(...(await keysOf('kairos:{*}:since')));
  await eventually('every partition to be restored again', restored);
  const epochsAfter = await Promise.all((await keysOf('kairos:{*}:epoch')).map((k) => redis.get(k)));
  expect(epochsAfter.map(Number).reduce((a, b) => a + b)).toBeGreaterThan(
    epochsBefore.map(Number).reduce((a, b) => a + b),
  );
  // 2. The waiting attempts' keys go too: a claim cannot tell them from finished ones (GONE), so
  // the worker asks the tracker, which finds them QUEUED in PostgreSQL and dispatches them again.
  await redis.del(...(await keysOf('kairos:{*}:a:*')));
  await redis.quit();
  const calls = new Map<string, number>();
  const worker = p.worker({ resourceClasses: ['io'] });
  worker.handle('loss.partial', (_, ctx) => void calls.set(ctx.jobId, (calls.get(ctx.jobId) ?? 0) + 1));
  await worker.start();
  await eventually(
    'every job to succeed',
    async () => (await jobs()).every((j) => j.state === 'SUCCEEDED'),
    60_000,
  );
  for (const { job } of created) expect(calls.get(job.id), job.id).toBe(1);
  // Dispatched again with a new fence, the same attempt: a lost key costs no attempt.
  for (const j of await jobs()) expect(j).toMatchObject({ attempt: 1, fence: 2 });
});
