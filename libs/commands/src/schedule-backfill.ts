import { fireTimesBetween, occurrenceId, spreadDueTimes, type Job, type Schedule } from '@kairos/core';
import { inTransaction, saveSchedule, type Pool } from '@kairos/db';
import { createRuns, occurrenceJobRow, type GenerationDeps } from './schedule-generation.js';
import { invalid } from './schedule-input.js';
import { lockLive, type ScheduleScope } from './schedule-steps.js';

export interface BackfillResult {
  readonly schedule: Schedule;
  /** Occurrences in the range. */
  readonly requested: number;
  /** Runs created now (an occurrence backfilled before is not run again). */
  readonly created: readonly Job[];
  readonly ratePerSec: number;
}

export interface BackfillDeps {
  readonly pool: Pool;
  readonly gen: GenerationDeps;
  /** Most runs per request: the default and ceiling of max_count. */
  readonly maxCount: number;
  /** Runs coming due per second. */
  readonly ratePerSec: number;
}

/**
 * Runs a schedule's occurrences of a past range [from, to) (the cron in the schedule's zone and
 * DST policy; its start_at and end_at do not apply, the range says where): at most max_count of
 * them (a range with more is refused, nothing is created), coming due at no more than the rate
 * from now on (after any earlier backfill of the schedule still in progress), each as its own run
 * (occurrence id of "backfill <nominal time>", so asking twice for the same range runs each
 * occurrence once). The overlap policy applies to them. `schedule` is the schedule as the caller
 * may see it and `range` the validated request (parseBackfillBody), both read before the transaction.
 */
export async function backfillSchedule(
  deps: BackfillDeps,
  schedule: Schedule,
  range: { readonly from: number; readonly to: number; readonly maxCount: number },
  now: Date,
  ctx: ScheduleScope & { readonly traceparent?: string | null },
): Promise<BackfillResult> {
  const { from, to, maxCount } = range;
  const id = schedule.id;
  // The range is explicit: the schedule's own start_at and end_at (its live window) do not cut it.
  const occurrences = fireTimesBetween({ ...schedule, startAt: null, endAt: null }, from, to, maxCount + 1);
  if (occurrences.length > maxCount) {
    throw invalid([
      {
        field: 'to',
        message: `the range holds more than ${maxCount} occurrences; narrow it or raise max_count (at most ${deps.maxCount})`,
      },
    ]);
  }
  return inTransaction(deps.pool, async (tx) => {
    const s = await lockLive(tx, id, ctx);
    const start = Math.max(now.getTime(), s.backfillNextAt?.getTime() ?? 0);
    const due = spreadDueTimes(occurrences.length, start, deps.ratePerSec);
    const runs = occurrences.map((o, i) => ({
      nominal: o.nominal,
      row: occurrenceJobRow(s, {
        occurrenceId: occurrenceId(id, `backfill ${o.nominal}`, o.instantIndex),
        occurrenceAt: o.instant,
        kind: 'backfill',
        dueAt: due[i] ?? start,
        misfireAfter: null,
      }),
    }));
    const created = await createRuns(tx, deps.gen, s, runs, now, ctx.traceparent ?? null);
    const last = created.reduce((m, j) => Math.max(m, j.dueAt.getTime()), 0);
    const saved =
      created.length === 0
        ? s
        : await saveSchedule(tx, {
            ...s,
            backfillNextAt: new Date(last + Math.ceil(1000 / deps.ratePerSec)),
            updatedAt: now,
          });
    return { schedule: saved, requested: occurrences.length, created, ratePerSec: deps.ratePerSec };
  });
}
