import {
  claimJobsAsOwner,
  holdPartitionEpoch,
  inTransaction,
  partitionOwner,
  takePartitionEpoch,
} from '@kairos/db';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

test('an owner whose epoch was superseded (kept alive across a takeover) cannot add, pop or dispatch for that partition; its other partitions go on', async () => {
  const ns = await useNamespace('stale-owner');
  const p = await startPipeline(ns);
  const partitions = ns.services.jobEventPartitions;
  await eventually(
    'the tier to own every partition',
    () => p.delayTier.ownedPartitions().length === partitions,
  );
  const worker = p.worker();
  const ran = new Set<string>();
  worker.handle('owner.check', (_payload, ctx) => void ran.add(ctx.jobId));
  await worker.start();

  // Warm-up: the tier has taken its epochs (every partition dispatches).
  const [warm] = await p.commands.createJobs([
    { tenant: 'acme', type: 'owner.check', resource_class: 'default' },
  ]);
  await eventually('the warm-up job to run', () => ran.has(warm!.job.id));
  const P = 0;
  const old = await partitionOwner(p.pool, P);
  expect(old).toBeDefined();

  // Another instance takes partition P (new epoch in PostgreSQL, raised in Redis) while this one,
  // never told of a rebalance, keeps running: exactly the zombie owner the epochs must stop.
  const intruder = await takePartitionEpoch(p.pool, P, 'intruder');
  expect(intruder).toBe(Number(old!.epoch) + 1);
  expect(await p.delayTier.hotSet.setEpoch(P, intruder)).toBe(true);

  const results = await p.commands.createJobs(
    Array.from({ length: 64 }, () => ({ tenant: 'acme', type: 'owner.check', resource_class: 'default' })),
  );
  const inP = results.filter((r) => r.job.shard === P).map((r) => r.job.id);
  const elsewhere = results.filter((r) => r.job.shard !== P).map((r) => r.job.id);
  expect(inP.length).toBeGreaterThan(0);
  await eventually('jobs of the other partitions to run', () => elsewhere.every((id) => ran.has(id)));
  await eventually(
    'the stale owner to give partition P up',
    () => !p.delayTier.ownedPartitions().includes(P),
  );

  // Nothing of P was added to its hot set, popped or dispatched by the stale owner.
  expect(inP.filter((id) => ran.has(id))).toEqual([]);
  expect(p.dispatched.filter((d) => d.record.shard === P && inP.includes(d.record.job_id))).toEqual([]);
  expect((await p.delayTier.hotSet.stats(P)).jobs).toBe(0);
  const states = await p.pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY state',
    [inP],
  );
  expect(states.rows).toEqual([{ state: 'SCHEDULED', n: inP.length }]);

  // The PostgreSQL fence says the same to any dispatch transaction tagged with the old epoch.
  expect(await inTransaction(p.pool, (tx) => holdPartitionEpoch(tx, P, Number(old!.epoch)))).toBe(false);
  expect(await inTransaction(p.pool, (tx) => holdPartitionEpoch(tx, P, intruder))).toBe(true);
  // And the dispatcher's claim, which checks the epoch in the same statement: the old epoch claims
  // nothing (and says so), a partition nobody took claims nothing, the current epoch claims.
  const candidates = (
    await p.pool.query<{ id: string; due_at: Date; version: number }>(
      'SELECT id, due_at, version FROM jobs WHERE id = ANY($1::uuid[])',
      [inP],
    )
  ).rows.map((r) => ({ jobId: r.id, dueAt: r.due_at, version: r.version }));
  const claim = (partition: number, epoch: number) =>
    inTransaction(p.pool, (tx) => claimJobsAsOwner(tx, partition, epoch, candidates, new Date()));
  expect(await claim(P, Number(old!.epoch))).toBeUndefined();
  expect(await claim(partitions + 7, 1)).toBeUndefined();
  expect((await claim(P, intruder))?.map((c) => c.id).sort()).toEqual([...inP].sort());
});
