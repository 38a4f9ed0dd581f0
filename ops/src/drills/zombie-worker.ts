import type { RunningApp } from '../deployment.js';
import type { DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { jobChecks, tallyJobs } from './job-checks.js';
import { marked, withMarks } from './plots.js';
import { failed, type Check, type DrillOutcome } from './record.js';

/** The worker's lease: short, so a pause of seconds outlives it many times over. */
const LEASE_MS = 2000;

/** One line of a drill worker about a job: START, or EFFECT applied / zombie. */
export interface WorkerEvent {
  readonly s: number;
  readonly app: string;
  readonly job: string;
  readonly fence: number;
  readonly what: 'START' | 'applied' | 'zombie';
}

/** The drill worker's lines about jobs, as events (other lines ignored). */
export function parseWorkerLine(app: string, line: string, atMs: number): WorkerEvent | undefined {
  const [kind, job, fence, result] = line.split(' ');
  if (!job || !fence || (kind !== 'START' && kind !== 'EFFECT')) return undefined;
  const what = kind === 'START' ? 'START' : result === 'applied' ? 'applied' : 'zombie';
  return { s: atMs / 1000, app, job, fence: Number(fence), what };
}

/** Each attempt as a bar from its start to its effect (applied or suppressed): the job timeline. */
export function attemptBars(events: readonly WorkerEvent[], jobs: readonly string[], endS: number) {
  return events
    .filter((e) => e.what === 'START')
    .map((start) => {
      const end = events.find((e) => e.job === start.job && e.fence === start.fence && e.what !== 'START');
      return {
        job: `job ${jobs.indexOf(start.job) + 1}`,
        attempt: `${start.app} fence ${start.fence}: ${end?.what ?? 'no effect'}`,
        from: start.s,
        to: end?.s ?? endS,
      };
    });
}

async function run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  const { jobs: n = 0, pause = 0, work = 0 } = inputs;
  const events: WorkerEvent[] = [];
  ctx.onLine((app, line, at) => {
    const e = parseWorkerLine(app, line, at);
    if (e) events.push(e);
  });
  const timings = {
    DRILL_LEASE_MS: String(LEASE_MS),
    DRILL_ON_ZOMBIE: 'shutdown',
    KAIROS_KAFKA_SESSION_TIMEOUT_MS: '6000',
  };
  await ctx.deploy(['api', 'tracker', 'delay-tier'], {});
  const zombie = await ctx.startWorker(timings);
  ctx.mark('apps up');
  const ids = await ctx.createJobs(
    Array.from({ length: n }, (_, i) => ({
      tenant: 'drill',
      type: 'drill.effect',
      resource_class: 'default',
      payload: { ms: work, i },
    })),
  );
  const started = (app: string, fence: number) => (id: string) =>
    events.some((e) => e.job === id && e.app === app && e.fence === fence && e.what === 'START');
  await ctx.waitFor('the worker to start every job', () => ids.every(started(zombie.name, 1)), 60_000);
  await ctx.deployment.kill(zombie, 'SIGSTOP');
  const stoppedAt = ctx.mark('worker SIGSTOPped', { jobs: n });
  // The rescuer joins now: the group rebalances once the paused worker's session has expired.
  const rescuer = await ctx.startWorker(timings);
  const rerun = (id: string) =>
    events.some((e) => e.job === id && e.app === rescuer.name && e.fence >= 2 && e.what === 'applied');
  const rescued = await ctx.until(() => {
    ctx.progress.update(ids.filter(rerun).length, n);
    return ids.every(rerun);
  }, pause * 1000);
  if (rescued) ctx.mark('rerun elsewhere');
  await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + pause * 1000 - ctx.now())));
  await ctx.deployment.kill(zombie, 'SIGCONT');
  const contAt = ctx.mark('worker SIGCONTed');
  const exited = await ctx.until(
    () => zombie.child.exitCode !== null || zombie.child.signalCode !== null,
    30_000,
  );
  const exitMs = exited ? ctx.mark('zombie exited', { code: zombie.child.exitCode }) - contAt : NaN;
  await ctx.settle(ids, 30_000);
  return judge(ctx, ids, events, { zombie, exitMs, rescued });
}

async function judge(
  ctx: DrillContext,
  ids: readonly string[],
  events: readonly WorkerEvent[],
  r: { zombie: RunningApp; exitMs: number; rescued: boolean },
): Promise<DrillOutcome> {
  const rows = await ctx.jobRows(ids);
  const tally = tallyJobs(rows, await ctx.effects());
  const { rows: fences } = await ctx.deployment.pool.query<{ fence: number }>(
    'SELECT fence::int FROM jobs WHERE id = ANY($1::uuid[])',
    [ids],
  );
  const byZombie = events.filter((e) => e.app === r.zombie.name);
  const numbers = {
    jobs: tally.jobs,
    lost: tally.lost,
    duplicates: tally.duplicates,
    fence_bumped: fences.filter((f) => f.fence >= 2).length,
    zombie_applied: byZombie.filter((e) => e.what === 'applied').length,
    zombie_suppressed: byZombie.filter((e) => e.what === 'zombie').length,
    zombie_exit_ms: r.exitMs,
  };
  const checks: Check[] = [
    ...jobChecks(tally),
    { ok: r.rescued, why: 'not every job ran again on the other worker during the pause' },
    {
      ok: numbers.fence_bumped === tally.jobs,
      why: `${tally.jobs - numbers.fence_bumped} jobs kept fence 1`,
    },
    { ok: numbers.zombie_applied === 0, why: `${numbers.zombie_applied} late writes of the zombie applied` },
    { ok: numbers.zombie_suppressed > 0, why: 'the zombie never tried its late write' },
    { ok: Number.isFinite(r.exitMs), why: 'the zombie did not exit within 30 s of waking' },
  ];
  const bars = attemptBars(events, ids, ctx.now() / 1000);
  const plot = withMarks(
    'zombie-worker: each attempt from start to its effect',
    [
      {
        data: { values: bars },
        mark: { type: 'bar', height: 8 },
        encoding: {
          x: { field: 'from', type: 'quantitative' },
          x2: { field: 'to' },
          y: { field: 'job', type: 'nominal', title: null },
          yOffset: { field: 'attempt' },
          color: { field: 'attempt', type: 'nominal', title: null, legend: { orient: 'bottom', columns: 2 } },
        },
      },
    ],
    marked(ctx.timeline, ['worker SIGSTOPped', 'rerun elsewhere', 'worker SIGCONTed', 'zombie exited']),
  );
  return { numbers, failures: failed(checks), plot, data: { events } };
}

export const zombieWorker: Drill = {
  name: 'zombie-worker',
  summary:
    'a worker SIGSTOPped past its lease while it holds jobs: fence bumped, another worker runs them, the zombie’s late write suppressed, the zombie exits',
  options: [
    { name: 'jobs', description: 'jobs the paused worker holds', default: 4, min: 1, max: 50 },
    {
      name: 'pause',
      description: 'seconds the worker stays SIGSTOPped (the seed’s GC pause: 50)',
      default: 20,
      min: 10,
      max: 300,
    },
    {
      name: 'work',
      description: 'milliseconds each handler works before its effect',
      default: 3000,
      min: 500,
      max: 60_000,
    },
  ],
  run,
};
