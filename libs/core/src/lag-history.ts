/**
 * Dispatch lag history: per minute and resource class, a histogram of due → dispatch lag over fixed
 * log-spaced upper bounds, accumulated in memory by each delay-tier instance and merged across
 * instances by readers (the console's chart). Pure: the delay tier flushes, the API reads.
 */

/**
 * Upper bounds of the buckets, ms: 1, 1.5, 2, 3, 5, 7 per decade from 1 ms to 700 s, then 1,000 s
 * (finer than kairos_dispatch_lag_seconds, for percentiles within ~25%). Stored rows depend on
 * them: changing them needs a new table.
 */
export const LAG_HISTORY_BOUNDS_MS: readonly number[] = [
  ...[1, 10, 100, 1000, 10_000, 100_000].flatMap((d) => [1, 1.5, 2, 3, 5, 7].map((m) => m * d)),
  1_000_000,
];

/** The bucket of a lag: the first whose bound is at least it; the last (overflow) above every bound. */
export function lagBucket(lagMs: number): number {
  const bounds = LAG_HISTORY_BOUNDS_MS;
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((bounds[mid] ?? Infinity) >= lagMs) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** One minute of one class's dispatch lag: bucket counts (one more than the bounds), count, sum, max. */
export interface LagMinute {
  readonly resourceClass: string;
  /** Start of the minute, ms since the epoch. */
  readonly minuteMs: number;
  readonly buckets: number[];
  count: number;
  sumMs: number;
  maxMs: number;
}

const keyOf = (resourceClass: string, minuteMs: number) => `${minuteMs}\u0000${resourceClass}`;

/**
 * The samples of the minutes not flushed yet, by class and minute. Bounded: past maxEntries
 * (class-minutes) the oldest minutes are dropped, so a PostgreSQL outage costs history, not memory.
 */
export class LagAccumulator {
  readonly #entries = new Map<string, LagMinute>();
  readonly #maxEntries: number;
  #dropped = 0;

  constructor(maxEntries = 10_000) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError(`maxEntries must be an integer >= 1, got ${maxEntries}`);
    this.#maxEntries = maxEntries;
  }

  /** Records a dispatch at `atMs` that was `lagMs` late (negative: released early, counted as 0). */
  observe(resourceClass: string, atMs: number, lagMs: number): void {
    if (!Number.isFinite(atMs) || !Number.isFinite(lagMs)) return;
    const lag = Math.max(0, lagMs);
    const e = this.#entry(resourceClass, Math.floor(atMs / 60_000) * 60_000);
    e.buckets[lagBucket(lag)]! += 1;
    e.count += 1;
    e.sumMs += lag;
    e.maxMs = Math.max(e.maxMs, lag);
  }

  /** Class-minutes holding samples not flushed yet. */
  get size(): number {
    return this.#entries.size;
  }

  /** Class-minutes dropped so far to stay within maxEntries. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Takes every pending class-minute (the accumulator is empty after). */
  drain(): LagMinute[] {
    const rows = [...this.#entries.values()];
    this.#entries.clear();
    return rows;
  }

  /** Puts back rows a flush could not write, merged with samples taken since (bounded as ever). */
  restore(rows: readonly LagMinute[]): void {
    for (const r of rows) {
      const e = this.#entry(r.resourceClass, r.minuteMs);
      r.buckets.forEach((n, i) => (e.buckets[i]! += n));
      e.count += r.count;
      e.sumMs += r.sumMs;
      e.maxMs = Math.max(e.maxMs, r.maxMs);
    }
  }

  #entry(resourceClass: string, minuteMs: number): LagMinute {
    const key = keyOf(resourceClass, minuteMs);
    let e = this.#entries.get(key);
    if (!e) {
      if (this.#entries.size >= this.#maxEntries) this.#dropOldest();
      e = {
        resourceClass,
        minuteMs,
        buckets: new Array<number>(LAG_HISTORY_BOUNDS_MS.length + 1).fill(0),
        count: 0,
        sumMs: 0,
        maxMs: 0,
      };
      this.#entries.set(key, e);
    }
    return e;
  }

  #dropOldest(): void {
    let oldest: string | undefined;
    let at = Infinity;
    for (const [k, e] of this.#entries) if (e.minuteMs < at) [oldest, at] = [k, e.minuteMs];
    if (oldest !== undefined) this.#entries.delete(oldest);
    this.#dropped += 1;
  }
}

/**
 * The q-quantile (0..1) of a histogram, as histogram_quantile does it: the bucket holding rank
 * q·count, interpolated linearly between its bounds (0 below the first). The overflow bucket
 * interpolates up to maxMs; no answer exceeds maxMs. 0 for an empty histogram.
 */
export function lagQuantile(q: number, buckets: readonly number[], maxMs: number): number {
  const count = buckets.reduce((a, b) => a + b, 0);
  if (count === 0) return 0;
  const rank = Math.min(1, Math.max(0, q)) * count;
  const bounds = LAG_HISTORY_BOUNDS_MS;
  let below = 0;
  for (let i = 0; i < buckets.length; i++) {
    const n = buckets[i] ?? 0;
    if (n === 0 || below + n < rank) {
      below += n;
      continue;
    }
    const lower = i === 0 ? 0 : (bounds[i - 1] ?? 0);
    const upper = i < bounds.length ? (bounds[i] ?? lower) : Math.max(maxMs, lower);
    return Math.min(maxMs, lower + ((upper - lower) * (rank - below)) / n);
  }
  return maxMs;
}

/** A class's dispatch lag in one minute, every instance merged. */
export interface LagPoint {
  readonly resourceClass: string;
  readonly minuteMs: number;
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/**
 * Merges the rows of every instance per class and minute (bucket counts summed, max of maxes) and
 * computes the percentiles of the merged histogram; by class, then minute.
 */
export function mergeLagMinutes(rows: readonly Omit<LagMinute, 'sumMs'>[]): LagPoint[] {
  const merged = new Map<string, Omit<LagMinute, 'sumMs'>>();
  for (const r of rows) {
    const key = keyOf(r.resourceClass, r.minuteMs);
    const m = merged.get(key);
    if (!m) {
      merged.set(key, { ...r, buckets: [...r.buckets] });
      continue;
    }
    r.buckets.forEach((n, i) => (m.buckets[i] = (m.buckets[i] ?? 0) + n));
    m.count += r.count;
    m.maxMs = Math.max(m.maxMs, r.maxMs);
  }
  return [...merged.values()]
    .filter((m) => m.count > 0)
    .sort((a, b) => a.resourceClass.localeCompare(b.resourceClass) || a.minuteMs - b.minuteMs)
    .map((m) => ({
      resourceClass: m.resourceClass,
      minuteMs: m.minuteMs,
      count: m.count,
      p50Ms: lagQuantile(0.5, m.buckets, m.maxMs),
      p99Ms: lagQuantile(0.99, m.buckets, m.maxMs),
      maxMs: m.maxMs,
    }));
}
