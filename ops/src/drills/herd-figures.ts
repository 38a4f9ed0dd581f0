/**
 * The pure arithmetic of the midnight-herd drill: its "midnight" as a daily cron, the release
 * curve of a herd, quantiles of lateness, the batch backlog over time and the lateness bound.
 */

/** A daily cron (6 fields, seconds first, read in UTC) that fires at the UTC wall time of `instantMs`. */
export function dailyCronAt(instantMs: number): string {
  const d = new Date(instantMs);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

/** The drill's "00:00": the first whole second at least `leadMs` after `nowMs`. */
export function midnightAfter(nowMs: number, leadMs: number): number {
  return Math.ceil((nowMs + leadMs) / 1000) * 1000;
}

/**
 * Dispatches per `binMs` bin relative to `zeroMs` (s = bin start), every bin from the first to the
 * last, widened to cover [`fromMs`, `toMs`] (relative) with empty bins: a herd released in one bin
 * still draws as a spike above zero.
 */
export function releaseCurve(
  dispatchedAtMs: readonly number[],
  zeroMs: number,
  binMs = 100,
  fromMs = Infinity,
  toMs = -Infinity,
): { s: number; n: number }[] {
  if (dispatchedAtMs.length === 0) return [];
  const bins = dispatchedAtMs.map((t) => Math.floor((t - zeroMs) / binMs));
  const lo = bins.reduce((a, b) => Math.min(a, b), Math.floor(fromMs / binMs));
  const hi = bins.reduce((a, b) => Math.max(a, b), Math.floor(toMs / binMs));
  const counts = new Array<number>(hi - lo + 1).fill(0);
  for (const b of bins) counts[b - lo]! += 1;
  return counts.map((n, i) => ({ s: ((lo + i) * binMs) / 1000, n }));
}

/** How a herd was released: first to last dispatch relative to its midnight, and the busiest bin. */
export interface HerdRelease {
  readonly firstMs: number;
  readonly lastMs: number;
  /** Last dispatch − first dispatch. */
  readonly spreadMs: number;
  /** Most dispatches in one 100 ms bin. */
  readonly peakPer100ms: number;
}

export function herdRelease(dispatchedAtMs: readonly number[], zeroMs: number): HerdRelease {
  const rel = dispatchedAtMs.map((t) => t - zeroMs);
  const firstMs = rel.reduce((a, t) => Math.min(a, t), Infinity);
  const lastMs = rel.reduce((a, t) => Math.max(a, t), -Infinity);
  if (rel.length === 0) return { firstMs: NaN, lastMs: NaN, spreadMs: NaN, peakPer100ms: 0 };
  const peakPer100ms = releaseCurve(dispatchedAtMs, zeroMs).reduce((a, c) => Math.max(a, c.n), 0);
  return { firstMs, lastMs, spreadMs: lastMs - firstMs, peakPer100ms };
}

/** The q-quantile (0–1) of `values` by the nearest-rank method; NaN when there are none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** A batch job's life: due, and finished (undefined: not by the end). */
export interface BatchSpan {
  readonly dueAtMs: number;
  readonly finishedAtMs: number | undefined;
}

/**
 * The batch backlog every `stepMs` from `fromMs` to `toMs`: jobs due and not yet finished. A sweep
 * over the sorted due and finish times, so 100,000 jobs cost a sort, not a scan per sample.
 */
export function backlogSeries(
  spans: readonly BatchSpan[],
  fromMs: number,
  toMs: number,
  stepMs: number,
): { atMs: number; backlog: number }[] {
  const due = spans.map((s) => s.dueAtMs).sort((a, b) => a - b);
  const done = spans
    .flatMap((s) => (s.finishedAtMs === undefined ? [] : [s.finishedAtMs]))
    .sort((a, b) => a - b);
  const out: { atMs: number; backlog: number }[] = [];
  let d = 0;
  let f = 0;
  for (let t = fromMs; t <= toMs; t += stepMs) {
    while (d < due.length && due[d]! <= t) d++;
    while (f < done.length && done[f]! <= t) f++;
    out.push({ atMs: t, backlog: Math.max(0, d - f) });
  }
  return out;
}
