import type { RunningApp } from '../deployment.js';
import type { DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { jobChecks, lateness, tallyJobs } from './job-checks.js';
import { DRILL_CLASSES } from './namespace.js';
import { marked, withMarks } from './plots.js';
import { failed, type DrillOutcome } from './record.js';
import { spreadJobs, spreadOptions } from './workload.js';

/** The seed's SLO: a probe (canary) of every class completes this soon after the crash. */
const PROBE_SLO_MS = 120_000;

/**
 * SIGKILLs `owner` the moment it logs its new assignment after a rebalance: it is taking its
 * epochs and rehydrating its hot sets from PostgreSQL then. Or after `maxWaitMs`, whatever it does.
 */
function killWhileHydrating(ctx: DrillContext, owner: RunningApp, maxWaitMs: number): Promise<void> {
  return new Promise((done) => {
    let fired = false;
    const kill = (during: boolean) => {
      if (fired) return;
      fired = true;
      ctx.mark('owner SIGKILLed', { instance: owner.instanceId, duringHydration: during });
      void ctx.deployment.kill(owner, 'SIGKILL').then(done);
    };
    ctx.onLine((app, line) => {
      if (app === owner.name && line.includes('"owning job-events partitions"')) kill(true);
    });
    setTimeout(() => kill(false), maxWaitMs).unref();
  });
}

async function run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  const { jobs: n = 0, spread = 0 } = inputs;
  const d = await ctx.deploy(['api', 'tracker', 'delay-tier'], {});
  const partitions = ctx.ns.services.jobEventPartitions;
  const owner = d.apps('delay-tier')[0] as RunningApp;
  await ctx.waitFor(
    'the owner to hold every partition',
    async () => (await ctx.owners()).get(owner.instanceId)?.length === partitions,
    60_000,
  );
  await ctx.startWorker();
  await ctx.startWorker();
  ctx.mark('apps up');
  const ids = await ctx.createJobs(spreadJobs(ctx.random, n, spread, 8000));
  ctx.mark('jobs created', { jobs: n });
  // The standby's arrival rebalances the group: the owner rehydrates its partitions, and dies doing it.
  const killed = killWhileHydrating(ctx, owner, 30_000);
  const standby = await d.startApp('delay-tier');
  ctx.mark('standby started', { instance: standby.instanceId });
  await killed;
  const killAt = ctx.now();
  const probes = await ctx.createJobs(
    DRILL_CLASSES.map((c) => ({
      tenant: 'drill',
      type: 'drill.effect',
      resource_class: c,
      payload: { probe: c },
    })),
  );
  const tookOver = await ctx.until(
    async () => (await ctx.owners()).get(standby.instanceId)?.length === partitions,
    60_000,
  );
  const takeoverMs = tookOver ? ctx.mark('standby took over') - killAt : NaN;
  const probeMs = await probeTimes(ctx, probes, killAt);
  const all = [...ids, ...probes];
  await ctx.settle(all, spread * 1000 + 60_000);
  ctx.mark('all settled');
  return judge(ctx, await ctx.jobRows(all), await ctx.effects(), { takeoverMs, probeMs });
}

/** Each probe's completion time after the kill (NaN: not within the SLO). */
async function probeTimes(ctx: DrillContext, probes: readonly string[], killAt: number): Promise<number[]> {
  const times = new Map<string, number>();
  await ctx.until(
    async () => {
      const { rows } = await ctx.deployment.pool.query<{ id: string; finished_at: Date }>(
        `SELECT id, finished_at FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
        [probes],
      );
      for (const r of rows) times.set(r.id, r.finished_at.getTime() - ctx.t0 - killAt);
      return times.size === probes.length;
    },
    PROBE_SLO_MS,
    250,
  );
  if (times.size === probes.length) ctx.mark('probes done');
  return probes.map((p) => times.get(p) ?? NaN);
}

function judge(
  ctx: DrillContext,
  rows: Awaited<ReturnType<DrillContext['jobRows']>>,
  effects: ReadonlyMap<string, number>,
  t: { takeoverMs: number; probeMs: number[] },
): DrillOutcome {
  const tally = tallyJobs(rows, effects);
  const late = lateness(rows, ctx.t0);
  const probeMax = Math.max(...t.probeMs);
  const numbers = {
    jobs: tally.jobs,
    lost: tally.lost,
    early: tally.early,
    duplicates: tally.duplicates,
    takeover_ms: t.takeoverMs,
    probe_max_ms: probeMax,
    late_max_ms: Math.max(0, ...late.map((l) => l.lateMs)),
  };
  const failures = failed([
    ...jobChecks(tally),
    { ok: Number.isFinite(t.takeoverMs), why: 'the standby never held every partition' },
    {
      ok: probeMax <= PROBE_SLO_MS,
      why: `a probe did not complete within ${PROBE_SLO_MS / 1000} s of the kill`,
    },
  ]);
  const plot = withMarks(
    'dispatcher-crash: dispatch lateness by due time',
    [
      {
        data: { values: late },
        mark: { type: 'point', filled: true, size: 12, opacity: 0.6 },
        encoding: {
          x: { field: 'dueS', type: 'quantitative' },
          y: { field: 'lateMs', type: 'quantitative', title: 'dispatched after due (ms)' },
        },
      },
    ],
    marked(ctx.timeline, ['standby started', 'owner SIGKILLed', 'standby took over']),
  );
  return { numbers, failures, plot, data: { lateness: late, probeMs: t.probeMs } };
}

export const dispatcherCrash: Drill = {
  name: 'dispatcher-crash',
  summary:
    'SIGKILL of the delay-tier owner while it hydrates, a standby running: nothing lost, early or doubled; probes complete within 120 s',
  options: [...spreadOptions(1200, 5)],
  run,
};
