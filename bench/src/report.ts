import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { resolve } from 'node:path';
import { writePlotPng, type PlotSpec } from '@kairos/ops';
import { median } from './stats.js';
import type { Measurement } from './workload.js';

export interface Aggregate extends Measurement {
  readonly runs: number;
}

/** Median of every (workload, variant, system, metric) over the runs; lost/duplicated are summed. */
export function aggregate(all: readonly Measurement[]): Aggregate[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of all) {
    const k = [m.workload, m.variant, m.system, m.metric].join('\u0000');
    groups.set(k, [...(groups.get(k) ?? []), m]);
  }
  return [...groups.values()].map((ms) => {
    const first = ms[0]!;
    const cpu = ms.flatMap((m) => (m.cpuPer1000 === undefined ? [] : [m.cpuPer1000]));
    const lost = ms.flatMap((m) => (m.lost === undefined ? [] : [m.lost]));
    const dup = ms.flatMap((m) => (m.duplicated === undefined ? [] : [m.duplicated]));
    return {
      ...first,
      value: median(ms.map((m) => m.value)),
      ...(cpu.length ? { cpuPer1000: median(cpu) } : {}),
      ...(lost.length ? { lost: lost.reduce((a, b) => a + b, 0) } : {}),
      ...(dup.length ? { duplicated: dup.reduce((a, b) => a + b, 0) } : {}),
      runs: ms.length,
    };
  });
}

export function machine() {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
  };
}

const fmt = (v: number | undefined, digits = 1) =>
  v === undefined || Number.isNaN(v)
    ? '–'
    : v >= 100
      ? Math.round(v).toLocaleString('en-US')
      : v.toFixed(digits);

function runsRange(rows: readonly Aggregate[]): string {
  const runs = rows.map((r) => r.runs);
  const lo = Math.min(...runs);
  const hi = Math.max(...runs);
  return lo === hi ? String(lo) : `${lo}–${hi} (per-row counts in results.json)`;
}

export function markdown(rows: readonly Aggregate[], meta: Record<string, unknown>): string {
  const systems = [...new Set(rows.map((r) => r.system))];
  const lines = [
    `# Kairos benchmarks (${String(meta.size)})`,
    '',
    `Machine: ${JSON.stringify(meta.machine)}. Date: ${String(meta.date)}. Runs per cell: ${runsRange(rows)} (median; warm-up excluded).`,
    `Command: \`${String(meta.command)}\``,
    '',
    ...(Array.isArray(meta.failures) && meta.failures.length > 0
      ? ['Failed cells:', ...meta.failures.map((f) => `- ${String(f)}`), '']
      : []),
    'Ratios are Kairos ÷ peer: above 1 is better for Kairos on throughput, worse on latency and lateness.',
    '',
    `| workload | variant | metric | ${systems.join(' | ')} | kairos ÷ peer | CPU s per 1,000 jobs (${systems.join(' / ')}) | lost / duplicated (${systems.join(' / ')}) |`,
    `| --- | --- | --- | ${systems.map(() => '---').join(' | ')} | --- | --- | --- |`,
  ];
  const cells = new Map(rows.map((r) => [[r.workload, r.variant, r.metric, r.system].join('\u0000'), r]));
  const keys = [...new Set(rows.map((r) => [r.workload, r.variant, r.metric, r.unit].join('\u0000')))];
  for (const key of keys) {
    const [workload, variant, metric, unit] = key.split('\u0000') as [string, string, string, string];
    const get = (s: string) => cells.get([workload, variant, metric, s].join('\u0000'));
    const kairos = get('kairos')?.value;
    const ratios = systems
      .filter((s) => s !== 'kairos')
      .map((s) => {
        const v = get(s)?.value;
        if (kairos === undefined || v === undefined) return null;
        // Latencies are stamped in whole milliseconds: below 1 ms a ratio only measures noise.
        if (unit === 'ms' && v < 1) return `${s} ≥${fmt(kairos, 2)}`;
        return v !== 0 ? `${s} ${fmt(kairos / v, 2)}` : null;
      })
      .filter(Boolean)
      .join(', ');
    lines.push(
      `| ${workload} | ${variant} | ${metric} (${unit}) | ${systems.map((s) => fmt(get(s)?.value)).join(' | ')} | ${ratios || '–'} | ${systems.map((s) => fmt(get(s)?.cpuPer1000, 2)).join(' / ')} | ${systems.map((s) => (get(s)?.lost === undefined ? '–' : `${get(s)?.lost}/${get(s)?.duplicated}`)).join(' / ')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function plot(rows: readonly Aggregate[], title: string, file: string): Promise<void> {
  const spec: PlotSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 520,
    height: 260,
    background: 'white',
    data: { values: rows.map((r) => ({ variant: r.variant, system: r.system, value: r.value })) },
    mark: 'bar',
    encoding: {
      x: { field: 'variant', type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'system' },
      y: { field: 'value', type: 'quantitative', title: `${rows[0]?.metric ?? ''} (${rows[0]?.unit ?? ''})` },
      color: { field: 'system', type: 'nominal' },
    },
  };
  await writePlotPng(spec, file);
}

/** Writes results.json, summary.md and one PNG per (workload, metric) into dir. */
export async function writeReport(
  dir: string,
  raw: readonly Measurement[],
  meta: Record<string, unknown>,
): Promise<{ summary: string; files: string[] }> {
  mkdirSync(dir, { recursive: true });
  const rows = aggregate(raw);
  const summary = markdown(rows, meta);
  const files = [resolve(dir, 'results.json'), resolve(dir, 'summary.md')];
  writeFileSync(files[0]!, JSON.stringify({ ...meta, results: rows, raw }, null, 2));
  writeFileSync(files[1]!, summary);
  const charts = new Map<string, Aggregate[]>();
  for (const r of rows)
    charts.set(`${r.workload} ${r.metric}`, [...(charts.get(`${r.workload} ${r.metric}`) ?? []), r]);
  for (const [name, chartRows] of charts) {
    const file = resolve(dir, `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.png`);
    await plot(chartRows, name, file);
    files.push(file);
  }
  return { summary, files };
}
