import * as hdr from 'hdr-histogram-js';

/** Latency summary from an HDR histogram (1 µs to 1 h, 3 significant digits), in ms. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly min: number;
}

export function summarize(samplesMs: readonly number[]): LatencySummary {
  const h = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  let min = Infinity;
  for (const ms of samplesMs) {
    h.recordValue(Math.max(1, Math.round(ms * 1000)));
    min = Math.min(min, ms);
  }
  const q = (p: number) => h.getValueAtPercentile(p) / 1000;
  const out = {
    count: samplesMs.length,
    p50: q(50),
    p99: q(99),
    p999: q(99.9),
    max: h.maxValue / 1000,
    min: samplesMs.length ? min : 0,
  };
  h.destroy();
  return out;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** Lost and duplicated jobs: every expected key should have started exactly once. */
export function deliveryCheck(expected: readonly string[], starts: ReadonlyMap<string, number>) {
  let lost = 0;
  let duplicated = 0;
  for (const key of expected) {
    const n = starts.get(key) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicated += n - 1;
  }
  return { lost, duplicated };
}
