import { intVar } from './env.js';

/**
 * How the schedule command handlers generate and backfill runs, read by every app that creates or
 * changes schedules (the API and the ingest), so both apply the same settings.
 */
export interface ScheduleEnv {
  /** KAIROS_MISFIRE_TOLERANCE_MS, default 5,000: how late a run may be dispatched and still be on time. */
  readonly misfireToleranceMs: number;
  readonly generation: {
    /** KAIROS_SCHEDULE_LOOKAHEAD_MS, default 120,000: runs are generated this far ahead. */
    readonly lookaheadMs: number;
    /** KAIROS_SCHEDULE_MIN_AHEAD, default 2: at least this many runs ahead. */
    readonly minAhead: number;
  };
  readonly backfill: {
    /** KAIROS_BACKFILL_MAX_COUNT, default 1,000: most runs of one backfill. */
    readonly maxCount: number;
    /** KAIROS_BACKFILL_RATE_PER_SEC, default 10: backfill runs coming due per second. */
    readonly ratePerSec: number;
  };
}

export function scheduleEnv(env: NodeJS.ProcessEnv = process.env): ScheduleEnv {
  return {
    misfireToleranceMs: intVar(env, 'KAIROS_MISFIRE_TOLERANCE_MS', 5000, 1000, 3_600_000),
    generation: {
      lookaheadMs: intVar(env, 'KAIROS_SCHEDULE_LOOKAHEAD_MS', 120_000, 1000, 86_400_000),
      minAhead: intVar(env, 'KAIROS_SCHEDULE_MIN_AHEAD', 2, 0, 1000),
    },
    backfill: {
      maxCount: intVar(env, 'KAIROS_BACKFILL_MAX_COUNT', 1000, 1, 100_000),
      ratePerSec: intVar(env, 'KAIROS_BACKFILL_RATE_PER_SEC', 10, 1, 10_000),
    },
  };
}
