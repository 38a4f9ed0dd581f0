import { DelayTier } from '@kairos/delay-tier';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, RESOURCE_CLASSES } from '../support/pipeline.js';

test('partitions handed between delay-tier instances by rebalances mid-run: every job dispatched once, none early', async () => {
  const ns = await useNamespace('handover');
  const p = await startPipeline(ns);
  const runs = new Map<string, number>();
  const worker = p.worker();
  worker.handle(
    'handover.check',
    (_payload, ctx) => void runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1),
  );
  await worker.start();

  // A second instance of the same group, same Redis namespace: it takes half of the partitions.
  const dispatchedByB: string[] = [];
  const redis = ns.redis();
  const b = new DelayTier({
    kafka: ns.kafka,
    codec: p.codec,
    redis,
    pool: p.pool,
    topics: p.topics,
    instanceId: 'delay-tier-b',
    groupId: `${ns.prefix}delay-tier`,
    resourceClasses: RESOURCE_CLASSES,
    onDispatched: (record) => dispatchedByB.push(record.job_id),
    // This one dispatches several partitions at once (the default is one at a time).
    dispatchConcurrency: 3,
  });

  try {
    const t0 = Date.now();
    const jobs = (
      await Promise.all(
        [0, 1].map((batch) =>
          p.commands.createJobs(
            Array.from({ length: 400 }, (_, i) => ({
              tenant: 'acme',
              type: 'handover.check',
              resource_class: RESOURCE_CLASSES[i % RESOURCE_CLASSES.length]!,
              due_at: new Date(t0 + 1000 + (batch * 400 + i) * 15).toISOString(), // over 12 s
            })),
          ),
        ),
      )
    ).flat();
    const due = new Map(jobs.map((r) => [r.job.id, r.job.dueAt.getTime()]));
    const partitions = ns.services.jobEventPartitions;

    await eventually('a first share of jobs to run', () => runs.size >= 150, 30_000);
    await b.start();
    await eventually(
      'the partitions to be split between the two instances',
      () => b.ownedPartitions().length > 0 && p.delayTier.ownedPartitions().length < partitions,
      60_000,
    );
    await eventually('more jobs to run after the split', () => runs.size >= 450, 30_000);
    // The first instance leaves: the second one takes every partition over.
    await p.delayTier.stop();
    await eventually(
      'the second instance to own everything',
      () => b.ownedPartitions().length === partitions,
      60_000,
    );

    await eventually('every job to run', () => runs.size === jobs.length, 60_000);
    expect(dispatchedByB.length).toBeGreaterThan(0);
    const dispatched = [...p.dispatched.map((d) => d.record.job_id), ...dispatchedByB];
    expect(dispatched.length).toBe(jobs.length); // once each: nothing dispatched by both owners
    expect(new Set(dispatched).size).toBe(jobs.length);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    const early = p.dispatched.filter((d) => d.atMs < due.get(d.record.job_id)!);
    expect(early).toEqual([]);
  } finally {
    await b.stop();
    await redis.quit();
  }
});
