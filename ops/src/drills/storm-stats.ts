import type { DownstreamCall } from './downstream.js';

/** A retry the tracker scheduled (its `attempt failed; retry scheduled` line), on the drill's clock. */
export interface RetryScheduled {
  /** When it was scheduled, seconds since the drill started. */
  readonly s: number;
  readonly job: string;
  /** The attempt that failed (1-based). */
  readonly failed: number;
  /** From the failure to the retry's due time, ms. */
  readonly delayMs: number;
}

/** The tracker's line about a scheduled retry as a RetryScheduled (other lines: undefined). */
export function parseRetryLine(line: string, t0Ms: number): RetryScheduled | undefined {
  if (!line.includes('"attempt failed; retry scheduled"')) return undefined;
  const o = JSON.parse(line) as { jobId?: string; attempt?: number; dueAt?: string; time?: string };
  const at = Date.parse(o.time ?? '');
  const due = Date.parse(o.dueAt ?? '');
  if (!o.jobId || !o.attempt || Number.isNaN(at) || Number.isNaN(due)) return undefined;
  // The line names the job's next attempt: the failed one is the one before.
  return { s: (at - t0Ms) / 1000, job: o.jobId, failed: o.attempt - 1, delayMs: due - at };
}

/** The backoff of the drill's jobs (their `retry` field). */
export interface Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  readonly jitterMs: number;
}

/**
 * The random part of each retry's delay: the delay less the exponential part base · 2^(n−1) for
 * failed attempt n (retries whose exponential part reached the cap are left out: no jitter shows).
 * Full jitter spreads these across [0, jitterMs]; a synchronized retry wave would bunch them.
 */
export function jitterParts(retries: readonly RetryScheduled[], b: Backoff): number[] {
  return retries
    .map((r) => ({ exp: b.baseMs * 2 ** Math.max(0, r.failed - 1), delay: r.delayMs }))
    .filter((r) => r.exp + b.jitterMs < b.capMs)
    .map((r) => Math.max(0, r.delay - r.exp));
}

/** Range and standard deviation of numbers (0 for fewer than two). */
export function spread(xs: readonly number[]): { rangeMs: number; sdMs: number } {
  if (xs.length < 2) return { rangeMs: 0, sdMs: 0 };
  const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
  return { rangeMs: Math.max(...xs) - Math.min(...xs), sdMs: sd };
}

/** The downstream's answers per whole second, by status (the bars of the plot). */
export function callsPerSecond(calls: readonly DownstreamCall[]): { s: number; status: string; n: number }[] {
  const bins = new Map<string, { s: number; status: string; n: number }>();
  for (const c of calls) {
    const s = Math.floor(c.atMs / 1000);
    const key = `${s}|${c.status}`;
    const bin = bins.get(key) ?? { s, status: String(c.status), n: 0 };
    bin.n += 1;
    bins.set(key, bin);
  }
  return [...bins.values()].sort((a, b) => a.s - b.s || a.status.localeCompare(b.status));
}

export type BreakerState = 'closed' | 'open' | 'ramping';

/** A change of the breaker's state, seconds since the drill started. */
export interface BreakerChange {
  readonly s: number;
  readonly state: BreakerState;
}

/** The spans the breaker was not closed (it starts closed); an unended span ends at `endS`. */
export function breakerSpans(
  changes: readonly BreakerChange[],
  endS: number,
): { from: number; to: number; state: BreakerState }[] {
  const spans: { from: number; to: number; state: BreakerState }[] = [];
  let current: BreakerChange = { s: 0, state: 'closed' };
  for (const c of [...changes, { s: endS, state: 'closed' as const }]) {
    if (current.state !== 'closed' && c.s > current.s)
      spans.push({ from: current.s, to: c.s, state: current.state });
    current = c;
  }
  return spans;
}

/** How the jobs waiting at the recovery were let go: all at once (a cliff) or spread (slow start). */
export interface Release {
  /** Jobs due before the release began that had not succeeded yet. */
  readonly backlog: number;
  /** Most successful calls in one second after the release began. */
  readonly peakPerSecond: number;
  /** Seconds from the release until the last of the backlog succeeded. */
  readonly drainS: number;
}

/**
 * The release after `fromMs` (the breaker's last slow start): `dueAtMs` is each job's first due
 * time. A cliff sends the whole backlog in about a second; slow start spreads it.
 */
export function release(
  calls: readonly DownstreamCall[],
  dueAtMs: ReadonlyMap<string, number>,
  fromMs: number,
): Release {
  const firstOk = new Map<string, number>();
  for (const c of calls) if (c.status === 200 && !firstOk.has(c.job)) firstOk.set(c.job, c.atMs);
  const waiting = [...dueAtMs].filter(
    ([job, due]) => due < fromMs && (firstOk.get(job) ?? Infinity) >= fromMs,
  );
  const perSecond = new Map<number, number>();
  for (const c of calls) {
    if (c.status !== 200 || c.atMs < fromMs) continue;
    const s = Math.floor((c.atMs - fromMs) / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  const lastOk = Math.max(fromMs, ...waiting.map(([job]) => firstOk.get(job) ?? fromMs));
  return {
    backlog: waiting.length,
    peakPerSecond: Math.max(0, ...perSecond.values()),
    drainS: (lastOk - fromMs) / 1000,
  };
}
