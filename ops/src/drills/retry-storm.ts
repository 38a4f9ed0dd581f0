import type { DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { Downstream } from './downstream.js';
import { jobChecks, stateCounts, tallyJobs, type JobRow } from './job-checks.js';
import { marked } from './plots.js';
import { failed, type Check, type DrillOutcome } from './record.js';
import { stormPlot } from './storm-plot.js';
import { spreadJobs } from './workload.js';
import {
  breakerSpans,
  jitterParts,
  parseRetryLine,
  release,
  spread,
  type Backoff,
  type BreakerChange,
  type BreakerState,
  type RetryScheduled,
} from './storm-stats.js';

/** The jobs' backoff: min(cap, base · 2^(n−1) + random(0, jitter)), the seed's formula scaled down. */
const BACKOFF: Backoff = { baseMs: 1000, capMs: 60_000, jitterMs: 10_000 };
/** Enough attempts that no job dead-letters: the breaker, not the attempts, rides out the outage. */
const MAX_ATTEMPTS = 20;
/** The downstream goes down this long after the first job is due (the plot shows a healthy start). */
const HEALTHY_FIRST_MS = 8000;
/**
 * Most of the backlog that may go out in one second after the recovery: more is a cliff. Without
 * slow start the backlog goes as fast as the worker runs (here, well over the default backlog a
 * second). The SDK's slow start admits its share of each ask, and a waiting task asks every
 * 250 ms, so at 5 % about a fifth of the backlog goes in the first second.
 */
const CLIFF_SHARE = 1 / 2;

interface Seen {
  readonly breaker: BreakerChange[];
  readonly retries: RetryScheduled[];
}

/** The worker's breaker changes and the tracker's scheduled retries, as they are printed. */
function watch(ctx: DrillContext): Seen {
  const seen: Seen = { breaker: [], retries: [] };
  ctx.onLine((app, line, at) => {
    const m = /^BREAKER drill\.call (closed|open|ramping)$/.exec(line);
    if (m) {
      const state = m[1] as BreakerState;
      if (state === 'open' && !seen.breaker.some((b) => b.state === 'open')) ctx.mark('breaker opened');
      seen.breaker.push({ s: at / 1000, state });
    }
    const r = app.startsWith('tracker') ? parseRetryLine(line, ctx.t0) : undefined;
    if (r) seen.retries.push(r);
  });
  return seen;
}

/** Jobs calling the downstream, of mixed classes, due across `spreadS` from `leadMs` on (seeded). */
const stormJobs = (random: () => number, n: number, spreadS: number, leadMs: number) =>
  spreadJobs(random, n, spreadS, leadMs).map((j) => ({
    ...j,
    type: 'drill.call',
    max_attempts: MAX_ATTEMPTS,
    retry: { base_ms: BACKOFF.baseMs, cap_ms: BACKOFF.capMs, jitter_ms: BACKOFF.jitterMs },
  }));

const sleepUntil = (ctx: DrillContext, atMs: number) =>
  new Promise((r) => setTimeout(r, Math.max(0, atMs - ctx.now())));

async function run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  const { jobs: n = 0, spread: spreadS = 0, outage = 0, open = 0, ramp = 0, share = 0 } = inputs;
  const downstream = new Downstream(() => ctx.now());
  await downstream.start();
  ctx.defer(() => downstream.stop());
  const seen = watch(ctx);
  await ctx.deploy(['api', 'tracker', 'delay-tier'], {});
  await ctx.startWorker({
    DRILL_DOWNSTREAM_URL: downstream.url,
    DRILL_BREAKER_OPEN_MS: String(open * 1000),
    DRILL_BREAKER_RAMP_MS: String(ramp * 1000),
    DRILL_BREAKER_INITIAL_SHARE: String(share / 100),
  });
  ctx.mark('apps up', { downstream: downstream.url });
  const firstDue = Date.now() + 3000;
  const planned = stormJobs(ctx.random, n, spreadS, 3000);
  const ids = await ctx.createJobs(planned);
  // Due times on the drill's clock, as the downstream's calls are.
  const dueAt = new Map(ids.map((id, i) => [id, Date.parse(planned[i]?.due_at ?? '') - ctx.t0]));
  ctx.mark('jobs created', { jobs: n });
  await sleepUntil(ctx, firstDue - ctx.t0 + HEALTHY_FIRST_MS);
  downstream.down = true;
  const downAt = ctx.mark('downstream down (503)', { seconds: outage });
  await sleepUntil(ctx, downAt + outage * 1000);
  downstream.down = false;
  const upAt = ctx.mark('downstream up');
  await ctx.settle(ids, spreadS * 1000 + (open + ramp) * 3000 + 60_000);
  // The breaker closes once its slow start has run its course without a failure.
  await ctx.until(() => seen.breaker.at(-1)?.state === 'closed', (open + ramp) * 1000 + 5000);
  ctx.mark('all settled');
  return judge(ctx, { rows: await ctx.jobRows(ids), effects: await ctx.effects(), dueAt }, seen, {
    downstream,
    downAt,
    upAt,
  });
}

interface Facts {
  readonly rows: readonly JobRow[];
  readonly effects: ReadonlyMap<string, number>;
  readonly dueAt: ReadonlyMap<string, number>;
}

/** The moments of the outage and the downstream that answered. */
interface Outage {
  readonly downstream: Downstream;
  readonly downAt: number;
  readonly upAt: number;
}

/** The checks of the storm: the breaker opened, retries jittered, the release spread, each call once. */
function stormChecks(
  seen: Seen,
  o: Outage,
  numbers: Readonly<Record<string, number>>,
  jitter: { n: number; rangeMs: number },
): Check[] {
  const openedInOutage = seen.breaker.some(
    (b) => b.state === 'open' && b.s * 1000 >= o.downAt && b.s * 1000 <= o.upAt,
  );
  const backlog = numbers.backlog ?? 0;
  return [
    { ok: openedInOutage, why: 'the breaker never opened during the outage' },
    { ok: seen.breaker.at(-1)?.state === 'closed', why: 'the breaker did not close again' },
    { ok: (numbers.rampings_after_up ?? 0) > 0, why: 'no slow start after the recovery' },
    {
      ok: jitter.n >= 10 && jitter.rangeMs >= BACKOFF.jitterMs / 2,
      why: `retries not spread by jitter (${jitter.n} retries, jitter range ${jitter.rangeMs} ms of ${BACKOFF.jitterMs})`,
    },
    { ok: backlog >= 10, why: `no backlog formed during the outage (${backlog} jobs)` },
    {
      ok: (numbers.release_peak_per_s ?? 0) <= CLIFF_SHARE * backlog,
      why: `a cliff: ${numbers.release_peak_per_s} of the ${backlog} waiting jobs in one second after the recovery`,
    },
    {
      ok: (numbers.ok_calls_twice ?? 0) === 0,
      why: `${numbers.ok_calls_twice} jobs charged twice downstream`,
    },
  ];
}

function judge(ctx: DrillContext, f: Facts, seen: Seen, o: Outage): DrillOutcome {
  const tally = tallyJobs(f.rows, f.effects);
  const calls = o.downstream.calls;
  const endS = ctx.now() / 1000;
  const spans = breakerSpans(seen.breaker, endS);
  const lastRamp = spans.filter((s) => s.state === 'ramping' && s.to * 1000 > o.upAt).at(-1);
  const rel = release(calls, f.dueAt, (lastRamp?.from ?? endS) * 1000);
  const parts = jitterParts(seen.retries, BACKOFF);
  const jitter = { n: parts.length, ...spread(parts) };
  const okPerJob = new Map<string, number>();
  for (const c of calls) if (c.status === 200) okPerJob.set(c.job, (okPerJob.get(c.job) ?? 0) + 1);
  const numbers = {
    jobs: tally.jobs,
    lost: tally.lost,
    duplicates: tally.duplicates,
    ok_calls_twice: [...okPerJob.values()].filter((k) => k > 1).length,
    calls_503: calls.filter((c) => c.status === 503).length,
    breaker_opened: seen.breaker.filter((b) => b.state === 'open').length,
    breaker_open_s: spans.filter((s) => s.state === 'open').reduce((a, s) => a + s.to - s.from, 0),
    rampings_after_up: spans.filter((s) => s.state === 'ramping' && s.to * 1000 > o.upAt).length,
    retries: seen.retries.length,
    jitter_range_ms: jitter.rangeMs,
    jitter_sd_ms: Math.round(jitter.sdMs),
    backlog: rel.backlog,
    release_peak_per_s: rel.peakPerSecond,
    release_drain_s: rel.drainS,
  };
  const failures = failed([...jobChecks(tally), ...stormChecks(seen, o, numbers, jitter)]);
  const plot = stormPlot(
    marked(ctx.timeline, ['downstream down (503)', 'breaker opened', 'downstream up']),
    Math.ceil(ctx.now() / 1000),
    { calls, spans, retries: seen.retries },
  );
  return {
    numbers,
    failures,
    plot,
    data: { states: stateCounts(f.rows), breaker: seen.breaker, spans, retries: seen.retries, calls },
  };
}

export const retryStorm: Drill = {
  name: 'retry-storm',
  summary:
    'a downstream answers 503 for --outage s: the worker’s breaker opens, retries spread by jitter, slow start releases the backlog (no cliff), each job charged once and SUCCEEDED',
  options: [
    { name: 'jobs', description: 'jobs calling the downstream', default: 300, min: 50, max: 20_000 },
    { name: 'spread', description: 'seconds over which they fall due', default: 60, min: 20, max: 600 },
    { name: 'outage', description: 'seconds the downstream answers 503', default: 30, min: 5, max: 600 },
    {
      name: 'open',
      description: 'seconds the breaker stays open before slow start',
      default: 10,
      min: 1,
      max: 300,
    },
    {
      name: 'ramp',
      description: 'seconds slow start takes back to full traffic',
      default: 20,
      min: 1,
      max: 300,
    },
    {
      name: 'share',
      description: 'percent of the work slow start admits at first (the seed’s 5 %)',
      default: 5,
      min: 1,
      max: 100,
    },
  ],
  run,
};
