import type { PlotSpec } from '../plot.js';

/** A moment of a drill worth plotting and reading back: the fault, the takeover, a probe's end. */
export interface TimelineEvent {
  /** Milliseconds since the drill started. */
  readonly atMs: number;
  readonly event: string;
  readonly detail?: Record<string, unknown>;
}

/** What a drill found: its numbers, the checks that failed (empty: PASS), its plot. */
export interface DrillOutcome {
  /** The figures of the verdict line, in the order printed (counts, milliseconds). */
  readonly numbers: Readonly<Record<string, number>>;
  /** One sentence per failed check; empty when every check held. */
  readonly failures: readonly string[];
  readonly plot: PlotSpec;
  /** The plotted rows and anything else worth keeping in the JSON record. */
  readonly data?: Record<string, unknown>;
}

/** The JSON record a drill writes next to its plot. */
export interface DrillRecord extends DrillOutcome {
  readonly drill: string;
  readonly seed: number;
  /** Where it ran (deleted afterwards): its PostgreSQL schema and its topic/key prefix. */
  readonly namespace: { readonly schema: string; readonly prefix: string };
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly timeline: readonly TimelineEvent[];
  readonly verdict: string;
  readonly pass: boolean;
}

/** A check of a drill: `ok`, or the sentence its FAIL line gives. */
export interface Check {
  readonly ok: boolean;
  readonly why: string;
}

/** The sentences of the checks that failed. */
export const failed = (checks: readonly Check[]): string[] => checks.filter((c) => !c.ok).map((c) => c.why);

/** `k=v, k=v` of a drill's numbers (milliseconds as given; the names carry their units). */
export function formatNumbers(numbers: Readonly<Record<string, number>>): string {
  return Object.entries(numbers)
    .map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(1)}`)
    .join(', ');
}

/** The one verdict line a drill ends with: `PASS name: numbers` or `FAIL name: why; numbers`. */
export function verdictLine(drill: string, outcome: Pick<DrillOutcome, 'numbers' | 'failures'>): string {
  const numbers = formatNumbers(outcome.numbers);
  return outcome.failures.length === 0
    ? `PASS ${drill}: ${numbers}`
    : `FAIL ${drill}: ${outcome.failures.join('; ')}; ${numbers}`;
}
