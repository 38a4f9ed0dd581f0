import type { DrillContext } from './context.js';
import { backlogSeries, herdRelease, quantile, releaseCurve, type HerdRelease } from './herd-figures.js';
import { herdRows, timedRows, type TimedRow } from './herd-load.js';
import { herdPlot } from './herd-plots.js';
import { jobChecks, stateCounts, tallyJobs, type JobTally } from './job-checks.js';
import { failed, type Check, type DrillOutcome } from './record.js';

/**
 * The lateness critical jobs must stay within: the dispatch-lag SLO Kairos pages on
 * (KairosDispatchLagHigh, p99 over 1 s). The unloaded phase must sit within it too, or the
 * machine is too busy to judge anything; both phases' figures go in the verdict.
 */
export const CRITICAL_BOUND_MS = 1000;
/** The first critical jobs meet a cold pipeline (first fetch, first produce): not "normal" yet. */
const WARM_UP_MS = 1000;

/** One run of the herd as the drill made it. */
export interface Midnight {
  readonly label: string;
  /** The midnight: when every schedule's occurrence falls (before jitter), UTC ms. */
  readonly atMs: number;
  readonly jitterMs: number;
  readonly schedules: readonly string[];
  readonly flood: readonly string[];
  /** Drill time (ms since start) when its batch had drained. */
  readonly drainedMs: number;
}

/**
 * What a critical job fell due into: `release`, a herd's midnight until the delay tier had
 * dispatched its whole batch (from the first jittered run on); `drain`, the rest of the batch's
 * drain, when it waits at the workers; `unloaded`, the first phase; `quiet`, between herds.
 */
export type Phase = 'unloaded' | 'release' | 'drain' | 'quiet';

/** A critical job's lateness (its handler's start after due) and the phase it fell due in. */
export interface CriticalLate {
  /** Due, seconds since the drill started. */
  readonly s: number;
  readonly lateMs: number;
  /** Due → dispatched_at, the delay tier's pop of the round that took it (its claim and produce follow). */
  readonly dispatchMs: number;
  readonly phase: Phase;
}

/** A herd's phases, UTC ms: its first jittered run, its batch all dispatched, its batch drained. */
export interface HerdWindow {
  readonly fromMs: number;
  readonly releasedMs: number;
  readonly drainedMs: number;
}

/** Each critical job's lateness by phase; the unloaded phase's first second is left out (a cold pipeline). */
export function criticalLateness(
  rows: readonly TimedRow[],
  windows: readonly HerdWindow[],
  t0: number,
  unloadedUntilMs: number,
): CriticalLate[] {
  const firstDue = rows.reduce((a, r) => Math.min(a, r.dueAtMs), Infinity);
  const phase = (due: number): Phase | undefined => {
    if (due < t0 + unloadedUntilMs) return due >= firstDue + WARM_UP_MS ? 'unloaded' : undefined;
    const w = windows.find((x) => due >= x.fromMs && due <= x.drainedMs);
    return w ? (due <= w.releasedMs ? 'release' : 'drain') : 'quiet';
  };
  return rows
    .flatMap((r) => {
      const p = phase(r.dueAtMs);
      if (!p) return [];
      const late = (r.startedAtMs ?? NaN) - r.dueAtMs;
      return [
        {
          s: (r.dueAtMs - t0) / 1000,
          lateMs: late,
          dispatchMs: (r.dispatchedAtMs ?? NaN) - r.dueAtMs,
          phase: p,
        },
      ];
    })
    .sort((a, b) => a.s - b.s);
}

const sum = (ts: readonly JobTally[], k: 'lost' | 'early' | 'duplicates') => ts.reduce((a, t) => a + t[k], 0);
const max = (xs: readonly number[]) => quantile(xs, 1);

/** The verdict's figures, in the order printed. */
function herdNumbers(
  runs: readonly Midnight[],
  windows: readonly HerdWindow[],
  tallies: readonly JobTally[],
  releases: readonly HerdRelease[],
  late: readonly CriticalLate[],
  floods: readonly (readonly TimedRow[])[],
): Record<string, number> {
  const of = (...phases: Phase[]) => late.filter((l) => phases.includes(l.phase)).map((l) => l.lateMs);
  const loaded = of('release', 'drain');
  const batch = floods.reduce((a, f) => a + f.length, 0);
  const drainS = runs.reduce((a, m, i) => a + drainSeconds(floods[i] ?? [], m.atMs), 0);
  // From each midnight (the batch's due time) to the tier's last dispatch of it, on average.
  const releaseS =
    runs.reduce((a, m, i) => a + ((windows[i]?.releasedMs ?? NaN) - m.atMs) / 1000, 0) / runs.length;
  return {
    herd: runs[0]?.schedules.length ?? 0,
    batch,
    lost: sum(tallies, 'lost'),
    early: sum(tallies, 'early'),
    duplicates: sum(tallies, 'duplicates'),
    spread_ms: releases[0]?.spreadMs ?? NaN,
    spread_jitter_ms: releases[1]?.spreadMs ?? NaN,
    peak_per_100ms: releases[0]?.peakPer100ms ?? NaN,
    peak_jitter_per_100ms: releases[1]?.peakPer100ms ?? NaN,
    critical_p50_ms: quantile(loaded, 0.5),
    critical_p99_ms: quantile(loaded, 0.99),
    critical_max_ms: max(loaded),
    batch_release_s: releaseS,
    critical_release_p99_ms: quantile(of('release'), 0.99),
    critical_drain_p99_ms: quantile(of('drain'), 0.99),
    critical_drain_max_ms: max(of('drain')),
    unloaded_p99_ms: quantile(of('unloaded'), 0.99),
    unloaded_max_ms: max(of('unloaded')),
    drain_per_s: Math.round(batch / drainS),
  };
}

function herdChecks(
  runs: readonly Midnight[],
  herds: readonly (readonly TimedRow[])[],
  tallies: readonly JobTally[],
  n: Readonly<Record<string, number>>,
): Check[] {
  const b = CRITICAL_BOUND_MS;
  return [
    ...tallies.flatMap(jobChecks),
    ...runs.map((m, i) => ({
      ok: (herds[i]?.length ?? 0) === m.schedules.length,
      why: `${m.label}: ${herds[i]?.length ?? 0} runs for ${m.schedules.length} schedules (a misfire adds a catch-up run)`,
    })),
    { ok: Number.isFinite(n.critical_p99_ms), why: 'no critical job fell due during a herd' },
    {
      ok: (n.unloaded_p99_ms ?? NaN) <= b,
      why: `critical p99 lateness unloaded already ${n.unloaded_p99_ms} ms, over the ${b} ms bound: too busy a machine to judge`,
    },
    {
      ok: (n.critical_p99_ms ?? NaN) <= b,
      why: `critical p99 lateness ${n.critical_p99_ms} ms over ${b} ms`,
    },
    {
      ok: (n.critical_max_ms ?? NaN) <= b,
      why: `critical max lateness ${n.critical_max_ms} ms over ${b} ms`,
    },
  ];
}

/** Both release curves over one span: the widest jitter's start to the last dispatch, a second either side. */
function curvesOf(
  runs: readonly Midnight[],
  herds: readonly (readonly TimedRow[])[],
  releases: readonly HerdRelease[],
) {
  const from = -Math.max(...runs.map((m) => m.jitterMs)) - 1000;
  const to = Math.max(0, ...releases.map((r) => r.lastMs).filter(Number.isFinite)) + 1000;
  return runs.flatMap((m, i) =>
    releaseCurve(dispatchTimes(herds[i] ?? []), m.atMs, 100, from, to).map((c) => ({
      ...c,
      run: m.jitterMs ? `${m.label} (±${m.jitterMs / 1000} s)` : m.label,
    })),
  );
}

const dispatchTimes = (rows: readonly TimedRow[]) => rows.flatMap((r) => r.dispatchedAtMs ?? []);

export async function judgeHerd(
  ctx: DrillContext,
  h: { criticalIds: readonly string[]; unloadedUntilMs: number; runs: readonly Midnight[] },
): Promise<DrillOutcome> {
  const effects = await ctx.effects();
  const critical = await timedRows(ctx, h.criticalIds);
  const herds = await Promise.all(h.runs.map((r) => herdRows(ctx, r.schedules, r.atMs)));
  const floods = await Promise.all(h.runs.map((r) => timedRows(ctx, r.flood)));
  const windows = h.runs.map((m, i) => ({
    fromMs: m.atMs - m.jitterMs,
    // The batch alone: a jittered herd's own runs leave over its whole window, by design.
    releasedMs: (floods[i] ?? []).reduce((a, r) => Math.max(a, r.dispatchedAtMs ?? a), m.atMs),
    drainedMs: ctx.t0 + m.drainedMs,
  }));
  const late = criticalLateness(critical, windows, ctx.t0, h.unloadedUntilMs);
  const releases = h.runs.map((m, i) => herdRelease(dispatchTimes(herds[i] ?? []), m.atMs));
  const tallies = [critical, ...herds, ...floods].map((rows) => tallyJobs(rows, effects));
  const numbers = herdNumbers(h.runs, windows, tallies, releases, late, floods);
  const curves = curvesOf(h.runs, herds, releases);
  const backlog = backlogSeries(floods.flat(), ctx.t0, Date.now(), 500).map((b) => ({
    s: (b.atMs - ctx.t0) / 1000,
    backlog: b.backlog,
  }));
  const data = {
    releases,
    windows,
    states: { critical: stateCounts(critical), herd: herds.map(stateCounts), batch: floods.map(stateCounts) },
    criticalLateness: late,
    curves,
    backlog,
  };
  return {
    numbers,
    failures: failed(herdChecks(h.runs, herds, tallies, numbers)),
    plot: herdPlot(ctx, curves, late, backlog, CRITICAL_BOUND_MS),
    data,
  };
}

/** Seconds from a batch's midnight to its last job finished. */
function drainSeconds(rows: readonly TimedRow[], atMs: number): number {
  const last = rows.reduce((a, r) => Math.max(a, r.finishedAtMs ?? atMs), atMs);
  return (last - atMs) / 1000;
}
