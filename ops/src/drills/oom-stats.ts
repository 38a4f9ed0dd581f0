/** Redis's memory from its `INFO memory` reply, bytes (maxmemory 0: no limit). */
export function redisMemory(info: string): { used: number; max: number } {
  return {
    used: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN),
    max: Number(/maxmemory:(\d+)/.exec(info)?.[1] ?? NaN),
  };
}

/** A gauge's value per value of one label in a Prometheus text exposition (`partition` → value). */
export function gaugeByLabel(text: string, name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  const labelRe = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const key = labelRe.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (key !== undefined && Number.isFinite(value)) out.set(key, value);
  }
  return out;
}

export type Mode = 'hot' | 'PostgreSQL-only';

/** A partition's mode as sampled (the delay tier's kairos_pg_fallback_active). */
export interface ModeSample {
  readonly s: number;
  readonly partition: number;
  readonly mode: Mode;
}

/** One stretch of a partition in one mode, seconds since the drill started. */
export interface ModeSpan {
  readonly partition: number;
  readonly mode: Mode;
  readonly from: number;
  readonly to: number;
}

/**
 * Each partition's samples as stretches of one mode: a stretch runs from its first sample to the
 * next stretch's first sample (or its own last sample, for the last one).
 */
export function modeSpans(samples: readonly ModeSample[]): ModeSpan[] {
  const byPartition = new Map<number, ModeSample[]>();
  for (const x of samples) byPartition.set(x.partition, [...(byPartition.get(x.partition) ?? []), x]);
  const spans: ModeSpan[] = [];
  for (const [partition, xs] of [...byPartition].sort((a, b) => a[0] - b[0])) {
    const sorted = [...xs].sort((a, b) => a.s - b.s);
    let start = sorted[0];
    for (let i = 1; i <= sorted.length; i++) {
      const x = sorted[i];
      if (start && (x === undefined || x.mode !== start.mode)) {
        spans.push({ partition, mode: start.mode, from: start.s, to: (x ?? sorted[i - 1] ?? start).s });
        start = x;
      }
    }
  }
  return spans;
}

/** A partition's mode at `s` by its spans (hot when none covers it). */
export function modeAt(spans: readonly ModeSpan[], partition: number, s: number): Mode {
  const span = spans.find((x) => x.partition === partition && x.from <= s && s < x.to);
  return span?.mode ?? 'hot';
}

/** The longest stretch any partition spent PostgreSQL-only, seconds (0: none did). */
export const longestPgOnly = (spans: readonly ModeSpan[]): number =>
  Math.max(0, ...spans.filter((x) => x.mode === 'PostgreSQL-only').map((x) => x.to - x.from));
