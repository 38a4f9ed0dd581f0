import {
  comparePositions,
  occurrencesAfter,
  take,
  toMs,
  type Cursor,
  type Instant,
  type Occurrence,
  type OccurrencePosition,
} from './occurrences.js';
import { DEFAULT_MISFIRE_POLICY, type MisfirePolicy, type ScheduleTiming } from './policy.js';

/** Skipped occurrences are counted up to this many (an every-second schedule down for a week has 604,800). */
export const MISFIRE_COUNT_CAP = 10_000;

export interface MisfirePlan {
  /** Occurrences to fire now, oldest first: those the policy catches up, then the on-time ones. */
  readonly fire: readonly Occurrence[];
  /** Missed occurrences the policy drops: how many (up to MISFIRE_COUNT_CAP) and whether that is exact. */
  readonly skipped: { readonly count: number; readonly exact: boolean };
  /**
   * Generation resumes after this: the newest occurrence due by `now` (fired or dropped), or
   * `lastFired` itself when nothing was due. Dropped occurrences are never generated again.
   */
  readonly resumeAfter: Cursor;
  /** The first occurrence after `now`, where the regular schedule picks up (null: none). */
  readonly next: Occurrence | null;
}

export interface MisfireOptions {
  /**
   * An occurrence at most this late at `now` is on time, not a misfire: it fires whatever the
   * policy (dispatch is never exact; a restart a few ms after 09:00 must not skip 09:00). Default 0.
   */
  readonly toleranceMs?: number;
}

/**
 * The newest `max` occurrences after `after` with instant ≤ `until`, ascending. Looks back from
 * `until` in windows growing fourfold, so the work is proportional to what is returned, not to the
 * length of the outage.
 */
export function newestOccurrences(
  timing: ScheduleTiming,
  after: Cursor,
  until: number,
  max: number,
): Occurrence[] {
  const afterMs = typeof after === 'number' ? after : after instanceof Date ? after.getTime() : after.instant;
  if (max <= 0 || until <= afterMs) return [];
  for (let window = 60_000; ; window *= 4) {
    const lo = until - window;
    const found = [...occurrencesAfter(timing, lo > afterMs ? lo : after, until + 1)];
    if (found.length >= max || lo <= afterMs) return found.slice(-max);
  }
}

/** Occurrences after `after` and before `stop` (or up to `until` when no stop), counted up to `cap`. */
function countBefore(
  timing: ScheduleTiming,
  after: Cursor,
  stop: OccurrencePosition | undefined,
  until: number,
  cap: number,
): { count: number; exact: boolean } {
  let count = 0;
  for (const o of occurrencesAfter(timing, after, (stop ? stop.instant : until) + 1)) {
    if (stop && comparePositions(o, stop) >= 0) break;
    if (++count > cap) return { count: cap, exact: false };
  }
  return { count, exact: true };
}

/**
 * What to fire after downtime. `lastFired` is the last occurrence handled (its position, or an
 * instant: the schedule's creation or resume time when none was). Occurrences due by `now` and at
 * most `toleranceMs` late fire as usual; those older are missed, and the policy decides:
 *   skip         none; the schedule resumes at its next future time
 *   fire_latest  the latest missed occurrence only (one catch-up run)
 *   fire_all     the newest `maxCount` missed occurrences, oldest first
 *   within       the missed occurrences younger than `windowMs` (newest `maxCount`), oldest first
 * fire_all keeps the newest rather than the oldest: when the burst must be capped, the recent runs
 * are the ones whose output still matters, and the catch-up then joins the regular schedule with no
 * hole before it; a full replay of a past range is what backfill is for.
 */
export function planMisfires(
  schedule: ScheduleTiming & { readonly misfire?: MisfirePolicy },
  lastFired: Cursor,
  now: Instant,
  policy: MisfirePolicy = schedule.misfire ?? DEFAULT_MISFIRE_POLICY,
  options: MisfireOptions = {},
): MisfirePlan {
  const nowMs = toMs(now);
  const tolerance = options.toleranceMs ?? 0;
  if (!Number.isInteger(tolerance) || tolerance < 0) {
    throw new RangeError(`toleranceMs must be a non-negative integer, got ${tolerance}`);
  }
  const after: Cursor = lastFired instanceof Date ? lastFired.getTime() : lastFired;
  // Instants in (missedUntil, now] are on time; those up to missedUntil are missed.
  const missedUntil = nowMs - tolerance - 1;
  const onTimeAfter: Cursor =
    typeof after === 'number'
      ? Math.max(after, missedUntil)
      : after.instant > missedUntil
        ? after
        : missedUntil;
  const onTime = [...occurrencesAfter(schedule, onTimeAfter, nowMs + 1)];

  let caughtUp: Occurrence[];
  switch (policy.kind) {
    case 'skip':
      caughtUp = [];
      break;
    case 'fire_latest':
      caughtUp = newestOccurrences(schedule, after, missedUntil, 1);
      break;
    case 'fire_all':
      caughtUp = newestOccurrences(schedule, after, missedUntil, policy.maxCount);
      break;
    case 'within': {
      // Younger than the window: instant > now − windowMs.
      const edge = nowMs - policy.windowMs;
      const from: Cursor = (typeof after === 'number' ? after : after.instant) > edge ? after : edge;
      caughtUp = newestOccurrences(schedule, from, missedUntil, policy.maxCount);
      break;
    }
  }

  // What the policy catches up is the newest run of missed occurrences: the rest, before it, is dropped.
  const skipped = countBefore(schedule, after, caughtUp[0], missedUntil, MISFIRE_COUNT_CAP);
  const newest: Occurrence | undefined =
    onTime.at(-1) ?? newestOccurrences(schedule, after, missedUntil, 1)[0];
  const resumeAfter: Cursor = newest ?? after;
  const next = take(occurrencesAfter(schedule, resumeAfter), 1)[0] ?? null;
  return { fire: [...caughtUp, ...onTime], skipped, resumeAfter, next };
}
