import type { DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { judgeHerd, type Midnight } from './herd-judge.js';
import { dailyCronAt, midnightAfter } from './herd-figures.js';
import {
  createFlood,
  createSchedules,
  criticalStream,
  herdDispatched,
  unfinishedOfClass,
} from './herd-load.js';
import type { DrillOutcome } from './record.js';

/** One critical job due every this many ms, all through the drill. */
const CRITICAL_EVERY_MS = 250;
/** How long before due a critical job is created. */
const CRITICAL_LEAD_MS = 3000;
/** The worker's slots, and those only `critical` may use (the seed's 60 %). */
const CONCURRENCY = 50;
const RESERVED_CRITICAL = 30;
/** Schedules and batch jobs created per second, at least (to place midnight after their creation). */
const SCHEDULES_PER_S = 40;
const BATCH_PER_S = 1500;
/** How often the drill looks at the database while it waits (each look counts jobs, lightly). */
const POLL_MS = 1000;

/**
 * One midnight: `n` daily schedules due at the same second (moved by their hash jitter in
 * ±`jitterMs`) and half the batch flood due at it; waits until the herd is dispatched and the
 * batch drained.
 */
async function midnight(
  ctx: DrillContext,
  label: string,
  i: Readonly<Record<string, number>>,
  jitterMs: number,
): Promise<Midnight> {
  const n = i.schedules ?? 0;
  const batch = Math.round((i.batch ?? 0) / 2);
  const lead = jitterMs + 5000 + (n / SCHEDULES_PER_S + batch / BATCH_PER_S) * 1000;
  const at = midnightAfter(Date.now(), lead);
  const cron = dailyCronAt(at);
  const schedules = await createSchedules(ctx, n, cron, jitterMs);
  // A schedule created after its time would fire tomorrow: then this run shows nothing.
  if (Date.now() > at - jitterMs) throw new Error(`creating ${n} schedules overran their midnight`);
  ctx.mark(`${label}: schedules created`, { cron, jitterMs, midnight: new Date(at).toISOString() });
  const flood = await createFlood(ctx, batch, at);
  ctx.mark(`${label}: batch created`, { batch, afterMidnightMs: Date.now() - at });
  const wait = async (what: string, check: () => Promise<boolean>, timeoutMs: number) => {
    if (!(await ctx.until(check, timeoutMs, POLL_MS))) throw new Error(`timed out: ${what}`);
  };
  await wait(
    `the ${label} herd to be dispatched`,
    async () => (await herdDispatched(ctx, schedules, at)) >= n,
    Math.max(0, at + jitterMs - Date.now()) + 120_000,
  );
  ctx.timeline.push({ atMs: at - ctx.t0, event: `${label}: 00:00` });
  await wait(
    `the ${label} batch to drain`,
    async () => {
      const left = await unfinishedOfClass(ctx, 'default');
      ctx.progress.update(batch - left, batch);
      return left === 0;
    },
    600_000 + batch * 20,
  );
  const drainedMs = ctx.mark(`${label}: batch drained`);
  return { label, atMs: at, jitterMs, schedules, flood, drainedMs };
}

async function run(ctx: DrillContext, i: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  await ctx.deploy(['api', 'tracker', 'delay-tier'], {});
  await ctx.startWorker({
    DRILL_CONCURRENCY: String(CONCURRENCY),
    DRILL_RESERVED_SLOTS: `critical:${RESERVED_CRITICAL}`,
  });
  ctx.mark('apps up');
  const critical = criticalStream(ctx, CRITICAL_EVERY_MS, CRITICAL_LEAD_MS);
  await new Promise((r) => setTimeout(r, CRITICAL_LEAD_MS + (i.unloaded ?? 0) * 1000));
  const unloadedUntilMs = ctx.mark('unloaded phase over');
  const plain = await midnight(ctx, 'without jitter', i, 0);
  const jittered = await midnight(ctx, 'with jitter', i, (i.jitter ?? 0) * 1000);
  const criticalIds = await critical.stop();
  await ctx.waitFor(
    'the last critical jobs to finish',
    async () => (await unfinishedOfClass(ctx, 'critical')) === 0,
    60_000,
  );
  ctx.mark('all settled', { critical: criticalIds.length });
  return judgeHerd(ctx, { criticalIds, unloadedUntilMs, runs: [plain, jittered] });
}

export const midnightHerd: Drill = {
  name: 'midnight-herd',
  summary:
    'N daily schedules due at the same second, without and with jitter, each with a batch flood while critical jobs keep arriving: the release curves; critical lateness within its unloaded bound',
  options: [
    {
      name: 'schedules',
      description: 'schedules in the herd (each run)',
      default: 1000,
      min: 10,
      max: 20_000,
    },
    {
      name: 'jitter',
      description: 'the second run’s jitter allowance, seconds (each schedule moved by its hash in ±)',
      default: 20,
      min: 1,
      max: 600,
    },
    {
      name: 'batch',
      description: 'batch jobs (class default) in the flood, half due at each midnight',
      default: 10_000,
      min: 0,
      max: 200_000,
    },
    {
      name: 'unloaded',
      description: 'seconds of critical jobs alone first, measuring their normal lateness',
      default: 10,
      min: 5,
      max: 120,
    },
  ],
  run,
};
