import type { DrillContext } from './context.js';
import type { DrillOutcome } from './record.js';

/** A numeric option of one drill (`--<name> <n>`), documented with its default and bounds. */
export interface DrillOption {
  readonly name: string;
  readonly description: string;
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

/**
 * One drill: it deploys what it needs in its context's namespace, injects its fault for real,
 * waits for the system to heal and judges what happened. The runner does the rest (namespace,
 * progress, record, plot, verdict line, clean-up), so a new drill is one file and one entry
 * in DRILLS.
 */
export interface Drill {
  readonly name: string;
  /** One line: the incident it replays and what PASS means. */
  readonly summary: string;
  readonly options: readonly DrillOption[];
  run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome>;
}

/**
 * The drill's inputs: its defaults overridden by `given` (strings from the command line).
 * Bad input is a clear error naming the option, before anything starts.
 */
export function drillInputs(
  drill: Drill,
  given: Readonly<Record<string, string | undefined>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of drill.options) {
    const raw = given[o.name];
    const v = raw === undefined ? o.default : Number(raw);
    if (!Number.isInteger(v) || v < o.min || v > o.max) {
      throw new RangeError(`--${o.name} must be an integer from ${o.min} to ${o.max}, got ${raw}`);
    }
    out[o.name] = v;
  }
  return out;
}
