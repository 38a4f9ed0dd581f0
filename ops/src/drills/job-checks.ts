import type { Check } from './record.js';

/** A job of a drill as PostgreSQL has it after the run. */
export interface JobRow {
  readonly id: string;
  readonly state: string;
  readonly dueAtMs: number;
  /** When it was last dispatched; undefined: never. */
  readonly dispatchedAtMs: number | undefined;
  readonly attempt: number;
}

/** How a drill's jobs ended up: the figures every drill's verdict starts from. */
export interface JobTally {
  readonly jobs: number;
  /** Not SUCCEEDED by the end of the drill. */
  readonly lost: number;
  /** Dispatched before their due time. */
  readonly early: number;
  /** Jobs whose side effect was applied more than once. */
  readonly duplicates: number;
  /** Jobs dispatched more than once (a retry after a lost lease; not an error in itself). */
  readonly redispatched: number;
}

/** Tallies jobs against their applied effects (job id → times the effect was applied). */
export function tallyJobs(rows: readonly JobRow[], effects: ReadonlyMap<string, number>): JobTally {
  return {
    jobs: rows.length,
    lost: rows.filter((r) => r.state !== 'SUCCEEDED').length,
    early: rows.filter((r) => r.dispatchedAtMs !== undefined && r.dispatchedAtMs < r.dueAtMs).length,
    duplicates: rows.filter((r) => (effects.get(r.id) ?? 0) > 1).length,
    redispatched: rows.filter((r) => r.attempt > 1).length,
  };
}

/** The checks every drill makes of its jobs: none lost, none early, no effect twice. */
export function jobChecks(t: JobTally): Check[] {
  return [
    { ok: t.lost === 0, why: `${t.lost} of ${t.jobs} jobs not SUCCEEDED` },
    { ok: t.early === 0, why: `${t.early} jobs dispatched before due` },
    { ok: t.duplicates === 0, why: `${t.duplicates} jobs' effect applied twice` },
  ];
}

/** Dispatch lateness of each dispatched job, ms, by due time relative to `t0Ms`. */
export function lateness(rows: readonly JobRow[], t0Ms: number): { dueS: number; lateMs: number }[] {
  return rows
    .filter((r) => r.dispatchedAtMs !== undefined)
    .map((r) => ({ dueS: (r.dueAtMs - t0Ms) / 1000, lateMs: (r.dispatchedAtMs ?? 0) - r.dueAtMs }))
    .sort((a, b) => a.dueS - b.dueS);
}

/** How many jobs are in each state (the record's first clue when some were lost). */
export function stateCounts(rows: readonly JobRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) out[r.state] = (out[r.state] ?? 0) + 1;
  return out;
}
