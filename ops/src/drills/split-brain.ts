import type { RunningApp } from '../deployment.js';
import { tierAdminUrls, type DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { jobChecks, stateCounts, tallyJobs, type JobRow } from './job-checks.js';
import { spreadJobs, spreadOptions } from './workload.js';
import { marked, withMarks } from './plots.js';
import { scrapeCounter } from './prom.js';
import { failed, type DrillOutcome } from './record.js';

const STALE = '"partition epoch is stale: another instance owns it"';

interface Sample {
  readonly s: number;
  readonly owner: string;
  readonly dispatched: number;
}

/** Samples each tier's kairos_dispatched_total every 500 ms until stopped (a paused tier gives none). */
function sampleDispatches(
  ctx: DrillContext,
  tiers: ReadonlyMap<string, string>,
): { samples: Sample[]; stop(): void } {
  const samples: Sample[] = [];
  const timer = setInterval(() => {
    const s = ctx.now() / 1000;
    for (const [owner, url] of tiers) {
      void scrapeCounter(`${url}/metrics`, 'kairos_dispatched_total').then((n) => {
        if (n !== undefined) samples.push({ s, owner, dispatched: n });
      });
    }
  }, 500);
  return { samples, stop: () => clearInterval(timer) };
}

/**
 * The sessions idle in a transaction or waiting for a lock, when B could not take over: a paused
 * owner frozen inside its dispatch transaction holds its rows until it wakes (or PostgreSQL's
 * idle-in-transaction timeout ends it), and a takeover has to wait for them.
 */
async function blockedSessions(ctx: DrillContext): Promise<Record<string, unknown>[]> {
  const { rows } = await ctx.deployment.pool.query<Record<string, unknown>>(
    `SELECT pid, state, wait_event_type, wait_event, now() - xact_start AS in_tx, left(query, 160) AS query
       FROM pg_stat_activity
      WHERE datname = current_database() AND (state = 'idle in transaction' OR wait_event_type = 'Lock')`,
  );
  return rows;
}

interface SplitFacts {
  readonly aHeld: readonly number[];
  readonly tookOver: boolean;
  readonly refusals: readonly { s: number; partition: number }[];
}

/**
 * Pauses owner A past its Kafka session so B takes its partitions (new epochs), then wakes it:
 * for a moment both believe they own A's partitions. Counts what A got refused for them.
 */
async function splitTheBrain(
  ctx: DrillContext,
  a: RunningApp,
  b: RunningApp,
  pauseS: number,
): Promise<SplitFacts> {
  const aHeld = (await ctx.owners()).get(a.instanceId) ?? [];
  const refusals: { s: number; partition: number }[] = [];
  ctx.onLine((app, line, at) => {
    const m = /"partition":(\d+)/.exec(line);
    if (app === a.name && line.includes(STALE)) refusals.push({ s: at / 1000, partition: Number(m?.[1]) });
  });
  await ctx.deployment.kill(a, 'SIGSTOP');
  const stoppedAt = ctx.mark('A SIGSTOPped', { partitions: aHeld });
  const all = ctx.ns.services.jobEventPartitions;
  const tookOver = await ctx.until(
    async () => (await ctx.owners()).get(b.instanceId)?.length === all,
    pauseS * 1000,
  );
  if (tookOver) ctx.mark('B took over');
  else ctx.mark('B still waiting', { sessions: await blockedSessions(ctx) });
  await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + pauseS * 1000 - ctx.now())));
  await ctx.deployment.kill(a, 'SIGCONT');
  ctx.mark('A SIGCONTed');
  // A acts on its old epochs at once (its timers are overdue); each partition refused tells it once.
  await ctx.until(() => refusals.length >= aHeld.length, 15_000);
  ctx.mark('A stood down', { refusals: refusals.length });
  return { aHeld, tookOver, refusals };
}

async function run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  const { jobs: n = 0, spread = 0, pause = 0 } = inputs;
  const urls = tierAdminUrls(ctx);
  const d = await ctx.deploy(['api', 'tracker', 'delay-tier', 'delay-tier'], {});
  await ctx.startWorker();
  const [a, b] = d.apps('delay-tier') as [RunningApp, RunningApp];
  await ctx.waitFor(
    'both tiers to own partitions',
    async () => {
      const o = await ctx.owners();
      return (o.get(a.instanceId)?.length ?? 0) > 0 && (o.get(b.instanceId)?.length ?? 0) > 0;
    },
    60_000,
  );
  const labels = new Map([
    [a.name, 'A (paused, stale)'],
    [b.name, 'B'],
  ]);
  const sampler = sampleDispatches(
    ctx,
    new Map([...urls].map(([app, url]) => [labels.get(app) ?? app, url])),
  );
  ctx.mark('apps up');
  const ids = await ctx.createJobs(spreadJobs(ctx.random, n, spread));
  ctx.mark('jobs created', { jobs: n });
  // Both owners dispatch for a while first, so the plot shows the split.
  await new Promise((r) => setTimeout(r, 6000));
  const facts = await splitTheBrain(ctx, a, b, pause);
  await ctx.settle(ids, spread * 1000 + 60_000);
  sampler.stop();
  ctx.mark('all settled');
  return judge(ctx, await ctx.jobRows(ids), await ctx.effects(), facts, sampler.samples);
}

function judge(
  ctx: DrillContext,
  rows: readonly JobRow[],
  effects: ReadonlyMap<string, number>,
  facts: SplitFacts,
  samples: readonly Sample[],
): DrillOutcome {
  const tally = tallyJobs(rows, effects);
  const doubled = rows.filter((r) => r.attempt > 1).length;
  const numbers = {
    jobs: tally.jobs,
    lost: tally.lost,
    early: tally.early,
    duplicates: tally.duplicates,
    doubled,
    stale_partitions: facts.tookOver ? facts.aHeld.length : 0,
    refused: facts.refusals.length,
  };
  const failures = failed([
    ...jobChecks(tally),
    { ok: facts.tookOver, why: 'B never took A’s partitions during the pause: no split brain arose' },
    {
      ok: facts.refusals.length > 0,
      why: 'the stale owner never acted on an old epoch, so nothing was refused',
    },
    { ok: doubled === 0, why: `${doubled} jobs dispatched twice` },
  ]);
  const plot = withMarks(
    'split-brain: dispatches per delay-tier owner',
    [
      {
        data: { values: samples },
        mark: { type: 'line', point: { size: 10 } },
        encoding: {
          x: { field: 's', type: 'quantitative', scale: { zero: false } },
          y: { field: 'dispatched', type: 'quantitative', title: 'jobs dispatched (cumulative)' },
          color: { field: 'owner', type: 'nominal', title: null, legend: { orient: 'top-left' } },
        },
      },
    ],
    marked(ctx.timeline, ['A SIGSTOPped', 'B took over', 'A SIGCONTed', 'A stood down']),
  );
  return { numbers, failures, plot, data: { states: stateCounts(rows), samples, ...facts } };
}

export const splitBrain: Drill = {
  name: 'split-brain',
  summary:
    'two delay-tier owners of the same partitions (one paused past its session, then resumed): the stale one’s dispatches refused, nothing doubled',
  options: [
    ...spreadOptions(800, 10),
    {
      name: 'pause',
      description: 'seconds owner A stays SIGSTOPped (past its 6 s Kafka session)',
      default: 15,
      min: 10,
      max: 300,
    },
  ],
  run,
};
