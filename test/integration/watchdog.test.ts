import { partitionKeys } from '@kairos/redis';
import { expect, test } from 'vitest';
import { bothCopiesRead } from '../support/events-read.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

// The reconciliation watchdog on the real pipeline: Redis loses some jobs' hot entries while the
// partition's epoch key stays, so no rebuild happens and the owner's cursor is past them: no one
// would ever dispatch them. The watchdog finds them past due + grace and re-enters them through
// their owner; each runs exactly once, none early, and only the lost ones are repaired.

const GRACE_MS = 1500;

/** A counter's value (summed over its series matching `labels`) from the tracker's registry. */
async function counter(p: Pipeline, name: string, labels: string): Promise<number> {
  const text = await p.tracker.metrics.text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

test('jobs whose hot entries Redis lost (epoch kept) are re-entered by the watchdog and run once, none early', async () => {
  const ns = await useNamespace('watchdog');
  const p = await startPipeline(ns, {
    watchdog: { intervalMs: 250, graceMs: GRACE_MS },
    // No pre-loading round after the first (at start, before any job): one whose cursor had not
    // yet passed the jobs would bring the lost entries back itself, as it should, and hide them.
    delayTier: { lookaheadMs: 600_000, preloadIntervalMs: 120_000, preloadMaxIntervalMs: 120_000 },
  });
  const n = 40;
  // Far enough ahead that waiting for the hot set and both event copies ends well before (CI is slow).
  const dueAt = Date.now() + 15_000;
  const created = await p.commands.createJobs(
    Array.from({ length: n }, (_, i) => ({
      tenant: 'acme',
      type: 'watchdog.check',
      resource_class: i % 2 === 0 ? 'default' : 'critical',
      payload: { i },
      due_at: new Date(dueAt + i * 5).toISOString(),
    })),
  );
  const jobs = created.map((c) => c.job);
  const holds = async () => {
    let held = 0;
    for (const j of jobs)
      if (
        (
          await p.delayTier.hotSet.holds(j.shard, [
            { jobId: j.id, resourceClass: j.resourceClass, tenant: j.tenantId },
          ])
        )[0]
      )
        held += 1;
    return held;
  };
  await eventually('every job to reach the hot set', async () => (await holds()) === n, 30_000);
  // Each event comes twice (relay, then Debezium): wait for the second copies, which must not
  // be what brings a lost entry back (in event mode a version seen before is ignored anyway).
  await bothCopiesRead(ns, p, n);

  // Redis loses half the jobs' entries; epoch keys and version markers stay.
  const lost = jobs.filter((_, i) => i % 4 < 2);
  const redis = ns.redis();
  // Half of them lose their record too; the others only their place in the queue (a record
  // without a queue entry is never popped either).
  for (const [i, j] of lost.entries()) {
    const k = partitionKeys('', j.shard);
    if (i % 2 === 0) await redis.hdel(k.jobs, j.id);
    await redis.zrem(k.queue(j.resourceClass, j.tenantId), j.id);
  }
  await redis.quit();
  expect(Date.now(), 'the loss must happen before the jobs are due').toBeLessThan(dueAt);
  expect(await holds()).toBe(n - lost.length);

  const runs = new Map<string, number[]>();
  const worker = p.worker();
  worker.handle('watchdog.check', (_payload, ctx) => {
    runs.set(ctx.jobId, [...(runs.get(ctx.jobId) ?? []), Date.now() - ctx.dueAt.getTime()]);
  });
  await worker.start();
  const succeeded = async () =>
    (await p.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE state = 'SUCCEEDED'`))
      .rows[0]?.n;
  await eventually(
    'every job to succeed, the lost ones re-entered',
    async () => (await succeeded()) === n,
    45_000,
  );

  // Each job ran once, never before it was due; the kept ones on time.
  for (const j of jobs) expect(runs.get(j.id)?.length, j.id).toBe(1);
  const early = await p.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE dispatched_at < due_at OR started_at < due_at`,
  );
  expect(early.rows[0]?.n).toBe(0);
  const lostIds = new Set(lost.map((j) => j.id));
  for (const j of jobs.filter((x) => !lostIds.has(x.id)))
    expect(runs.get(j.id)?.[0], j.id).toBeLessThan(GRACE_MS);
  // The watchdog found and re-entered exactly the lost jobs that ran late: those past due + grace.
  // (A rebuild of a partition, e.g. after a rebalance on a loaded machine, rightly restores the
  // lost entries of that partition itself; such a job runs on time and needed no repair.)
  const late = lost.filter((j) => (runs.get(j.id)?.[0] ?? 0) >= GRACE_MS);
  const findings = await counter(p, 'kairos_watchdog_findings_total', 'kind="lost_scheduled"');
  expect(await counter(p, 'kairos_watchdog_repairs_total', 'kind="lost_scheduled"')).toBe(findings);
  expect(findings).toBe(late.length);
  expect(late.length).toBeGreaterThan(lost.length / 2);
  const lateness = late.map((j) => runs.get(j.id)?.[0] ?? 0);
  console.log(
    `[watchdog] ${late.length} of ${lost.length} lost jobs re-entered by the watchdog; lateness ms min ${Math.min(...lateness)} max ${Math.max(...lateness)} (grace ${GRACE_MS} ms)`,
  );
});
