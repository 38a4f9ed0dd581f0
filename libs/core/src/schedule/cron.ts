import { CronExpressionParser, type CronExpression } from 'cron-parser';

/**
 * Cron expressions, read by cron-parser, matched on a *floating* wall-clock timeline: a local
 * date-time y-m-d h:m:s is the number Date.UTC(y, m-1, d, h, m, s), whatever the zone. On that
 * timeline every day has 24 hours and no wall time is missing or repeated, so enumerating the
 * matches of the cron fields never meets a DST rule. Turning a wall time into instants is the
 * separate job of zone.ts; cron-parser's own time-zone and DST handling is never used.
 */

export const DAY_MS = 86_400_000;

/** A cron expression ready to enumerate nominal wall-clock times (floating ms, see above). */
export interface CompiledCron {
  /** The expression as given, trimmed. */
  readonly expression: string;
  /** Whether the day starting at floating ms `dayStart` matches the day fields (month, day of month, day of week). */
  matchesDay(dayStart: number): boolean;
  /** Matching times of day, ms after midnight, ascending. */
  readonly timesOfDay: readonly number[];
}

export type CronCheck = { ok: true; cron: CompiledCron } | { ok: false; reason: string };

const cache = new Map<string, CompiledCron>();

/**
 * Parses a 5-field (minute first) or 6-field (second first) expression, or one of cron-parser's
 * @aliases (@daily, @hourly…). A bad expression gives cron-parser's own reason. Hashed values
 * (`H`) are refused: cron-parser draws them at random unless seeded, and an occurrence's time must
 * be a pure function of the schedule.
 */
export function compileCron(expression: string): CronCheck {
  const trimmed = expression.trim();
  const hit = cache.get(trimmed);
  if (hit) return { ok: true, cron: hit };
  const fields = trimmed.split(/\s+/);
  if (!trimmed.startsWith('@') && (fields.length < 5 || fields.length > 6)) {
    return {
      ok: false,
      reason: `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), got ${trimmed === '' ? 0 : fields.length}`,
    };
  }
  // Month and day-of-week names (thu, mar…) are letters; any other H is a hashed value.
  if (fields.some((f) => /H/.test(f.replace(/[a-z]{3}/gi, '')))) {
    return {
      ok: false,
      reason: 'hashed values (H) are not supported; spread schedules with jitter_ms instead',
    };
  }
  let parsed: CronExpression;
  try {
    parsed = CronExpressionParser.parse(trimmed, { tz: 'UTC', currentDate: 0 });
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
  const f = parsed.fields;
  const seconds = f.second.values;
  const minutes = f.minute.values;
  const hours = f.hour.values;
  const months = new Set<number>(f.month.values);
  const timesOfDay: number[] = [];
  for (const h of hours)
    for (const m of minutes) for (const s of seconds) timesOfDay.push((h * 3600 + m * 60 + s) * 1000);
  const firstTime = timesOfDay[0] ?? 0;
  const cron: CompiledCron = {
    expression: trimmed,
    timesOfDay,
    // cron-parser decides the day: its rules for L, # and the day-of-month OR day-of-week case.
    // It reads the floating instant in UTC, which is the wall clock itself.
    matchesDay: (dayStart) =>
      months.has(new Date(dayStart).getUTCMonth() + 1) && parsed.includesDate(new Date(dayStart + firstTime)),
  };
  if (cache.size >= 1000) cache.clear();
  cache.set(trimmed, cron);
  return { ok: true, cron };
}

/** Like compileCron, but a bad expression is a RangeError. */
export function mustCompileCron(expression: string): CompiledCron {
  const r = compileCron(expression);
  if (!r.ok) throw new RangeError(`invalid cron expression "${expression}": ${r.reason}`);
  return r.cron;
}

/** Floating day start (UTC midnight of the wall-clock date) of a floating ms. */
export function floorDay(floating: number): number {
  return Math.floor(floating / DAY_MS) * DAY_MS;
}

/**
 * Matching nominal wall times ≥ `fromWall` (floating ms), ascending, lazily. Stops after
 * `maxDaysWithoutMatch` consecutive days without a match (an expression like "0 0 29 2 1" can
 * wait years; none waits longer than the default).
 */
export function* wallTimesFrom(
  cron: CompiledCron,
  fromWall: number,
  maxDaysWithoutMatch = 366 * 8 + 7,
): Generator<number, void, undefined> {
  let day = floorDay(fromWall);
  let idle = 0;
  for (;;) {
    if (cron.matchesDay(day)) {
      idle = 0;
      for (const t of cron.timesOfDay) {
        const wall = day + t;
        if (wall >= fromWall) yield wall;
      }
    } else if (++idle > maxDaysWithoutMatch) {
      return;
    }
    day += DAY_MS;
  }
}
