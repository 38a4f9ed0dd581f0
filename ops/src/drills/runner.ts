import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { HarnessServices } from '../namespace-setup.js';
import { writePlotPng } from '../plot.js';
import { DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { drillNamespace, purgeNamespace } from './namespace.js';
import type { Progress } from './progress.js';
import { verdictLine, type DrillOutcome, type DrillRecord } from './record.js';

export interface RunOptions {
  readonly services: HarnessServices;
  readonly seed: number;
  /** Where `<drill>.json` and `<drill>.png` go (created if missing). */
  readonly outDir: string;
  readonly inputs: Readonly<Record<string, number>>;
  readonly progress: Progress;
  /** CPU profiles of the drill's apps go under this directory (none when undefined). */
  readonly profileDir?: string;
}

/**
 * Runs one drill in a namespace of its own and always cleans it up (apps stopped, topics, keys and
 * schema deleted), even when the drill throws: a drill that could not finish is a FAIL with its
 * reason. Writes the JSON record and the plot; returns the record (its `verdict` is the line).
 */
export async function runDrill(drill: Drill, o: RunOptions): Promise<DrillRecord> {
  const ns = drillNamespace(o.services);
  const ctx = new DrillContext(ns, o.seed, o.progress, o.profileDir);
  const startedAt = new Date(ctx.t0).toISOString();
  let outcome: DrillOutcome;
  try {
    outcome = await drill.run(ctx, o.inputs);
  } catch (err) {
    ctx.mark('drill aborted', { error: err instanceof Error ? err.message : String(err) });
    outcome = {
      numbers: {},
      failures: [`did not finish: ${err instanceof Error ? err.message : String(err)}`],
      plot: { data: { values: [] }, mark: 'point' },
    };
  } finally {
    ctx.progress.phase('cleaning up');
    await ctx.stop().catch(() => undefined);
    await purgeNamespace(ns).catch(() => undefined);
    o.progress.stop();
  }
  const record: DrillRecord = {
    drill: drill.name,
    seed: o.seed,
    namespace: { schema: ns.schema, prefix: ns.prefix },
    inputs: o.inputs,
    startedAt,
    durationMs: ctx.now(),
    timeline: ctx.timeline,
    ...outcome,
    data: { ...outcome.data, appErrors: ctx.errors },
    verdict: verdictLine(drill.name, outcome),
    pass: outcome.failures.length === 0,
  };
  mkdirSync(o.outDir, { recursive: true });
  writeFileSync(resolve(o.outDir, `${drill.name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  await writePlotPng(outcome.plot, resolve(o.outDir, `${drill.name}.png`));
  return record;
}
