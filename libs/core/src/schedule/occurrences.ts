import { DAY_MS, floorDay, mustCompileCron, wallTimesFrom } from './cron.js';
import { DEFAULT_DST_POLICY, type DstPolicy, type ScheduleTiming } from './policy.js';
import { WINDOW_MS, ZoneRules } from './zone.js';

/**
 * Occurrences of a schedule: each matching nominal wall-clock time of the cron, in the schedule's
 * zone, resolved to instants with the zone's real rules (luxon) at the moment of generation.
 *
 * 1. cron.ts enumerates the nominal wall times on a floating timeline (wall clock read as if UTC),
 *    where no wall time is missing or doubled.
 * 2. zone.ts resolves each to the instants whose local time it is: one (regular), none (gap),
 *    two (overlap).
 * 3. The DST policy picks: a gap time is shifted to the first instant after the gap (`shift`,
 *    kind gap-shifted) or dropped (`skip`); an overlap time fires at the earlier instant
 *    (`first`), the later (`last`), or both, as two occurrences.
 * 4. Occurrences come out ordered by (instant, nominal wall time). Instants never decrease; they
 *    are strictly increasing except that a gap-shifted occurrence shares the gap's end instant
 *    with the other gap times shifted there and with a regular occurrence at the gap's end (every
 *    15 minutes in a 02:00→03:00 gap: 02:00, 02:15, 02:30, 02:45 and 03:00 all fire at 03:00).
 *    With `both`, the walls of an overlap interleave (01:30 EDT, 01:45 EDT, … 01:30 EST), so the
 *    generator holds an occurrence back until no later wall time can still fire before it.
 */

export type OccurrenceKind = 'regular' | 'gap-shifted' | 'overlap-first' | 'overlap-last';

/** Where an occurrence sits in a schedule's order; resuming "after" it skips ties correctly. */
export interface OccurrencePosition {
  readonly instant: number;
  readonly nominal: string;
}

export interface Occurrence extends OccurrencePosition {
  /** Nominal wall-clock time and zone, e.g. `2026-03-08T02:30:00[America/New_York]`: its identity. */
  readonly nominal: string;
  /** When it fires (before jitter), UTC ms. */
  readonly instant: number;
  /** The local wall-clock time at `instant`, ISO with its offset, e.g. `2026-03-08T03:00:00-04:00`. */
  readonly local: string;
  readonly kind: OccurrenceKind;
  /** 0 for a wall time's only or earlier instant, 1 for the later instant of an overlap. */
  readonly instantIndex: 0 | 1;
}

/** A point in time: Date or UTC ms. */
export type Instant = Date | number;

/** Where to resume: strictly after an instant, or strictly after an occurrence's position. */
export type Cursor = Instant | OccurrencePosition;

export function toMs(t: Instant): number {
  return typeof t === 'number' ? t : t.getTime();
}

/** The local part of a nominal, `2026-03-08T02:30:00`. */
export function nominalLocal(nominal: string): string {
  const i = nominal.indexOf('[');
  return i < 0 ? nominal : nominal.slice(0, i);
}

/** Orders positions by instant, then nominal wall time. */
export function comparePositions(a: OccurrencePosition, b: OccurrencePosition): number {
  if (a.instant !== b.instant) return a.instant < b.instant ? -1 : 1;
  const la = nominalLocal(a.nominal);
  const lb = nominalLocal(b.nominal);
  return la < lb ? -1 : la > lb ? 1 : 0;
}

function cursorInstant(c: Cursor): number {
  return typeof c === 'number' ? c : c instanceof Date ? c.getTime() : c.instant;
}

function isAfter(o: Occurrence, c: Cursor): boolean {
  if (typeof c === 'number' || c instanceof Date) return o.instant > toMs(c);
  return comparePositions(o, c) > 0;
}

let prefixDay = NaN;
let prefix = '';
const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** ISO local date-time of a floating ms (whole seconds): `2026-03-08T02:30:00`. */
export function isoLocal(floating: number): string {
  const day = floorDay(floating);
  if (day !== prefixDay) {
    prefixDay = day;
    prefix = new Date(day).toISOString().slice(0, 11);
  }
  const s = Math.floor((floating - day) / 1000);
  return `${prefix}${pad2(Math.floor(s / 3600))}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)}`;
}

/** `+05:30`, `-04:00`, `+00:00`. */
export function formatOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${sign}${hh}:${mm}`;
}

function policyOf(timing: ScheduleTiming): DstPolicy {
  return {
    gap: timing.dst?.gap ?? DEFAULT_DST_POLICY.gap,
    overlap: timing.dst?.overlap ?? DEFAULT_DST_POLICY.overlap,
  };
}

function regular(rules: ZoneRules, wall: number, offset: number): Occurrence {
  const instant = wall - offset;
  return {
    nominal: `${isoLocal(wall)}[${rules.name}]`,
    instant,
    local: isoLocal(wall) + formatOffset(offset),
    kind: 'regular',
    instantIndex: 0,
  };
}

/** The occurrences one nominal wall time gives under the DST policy, ascending. */
function occurrencesOfWall(rules: ZoneRules, policy: DstPolicy, wall: number): Occurrence[] {
  const nominal = `${isoLocal(wall)}[${rules.name}]`;
  const at = (instant: number, offset: number, kind: OccurrenceKind, instantIndex: 0 | 1): Occurrence => ({
    nominal,
    instant,
    local: isoLocal(instant + offset) + formatOffset(offset),
    kind,
    instantIndex,
  });
  const r = rules.resolve(wall);
  if (r.kind === 'gap') return policy.gap === 'skip' ? [] : [at(r.gapEnd, r.offset, 'gap-shifted', 0)];
  const first = r.instants[0]!;
  const last = r.instants[r.instants.length - 1]!;
  if (r.instants.length === 1) return [at(first.instant, first.offset, 'regular', 0)];
  const out: Occurrence[] = [];
  if (policy.overlap !== 'last') out.push(at(first.instant, first.offset, 'overlap-first', 0));
  if (policy.overlap !== 'first') out.push(at(last.instant, last.offset, 'overlap-last', 1));
  return out;
}

/**
 * Occurrences strictly after `after` and before `until` (exclusive, UTC ms), in order, lazily;
 * the schedule's startAt (inclusive) and endAt (exclusive) bound them too. The sequence is
 * unbounded unless an end is given, and ends early only for an expression with no match in eight
 * years.
 */
export function* occurrencesAfter(
  timing: ScheduleTiming,
  after: Cursor,
  until: Instant = Infinity,
): Generator<Occurrence, void, undefined> {
  const cron = mustCompileCron(timing.cron);
  const rules = ZoneRules.of(timing.timeZone);
  const policy = policyOf(timing);
  let cursor: Cursor = after instanceof Date ? after.getTime() : after;
  if (timing.startAt !== undefined && timing.startAt !== null) {
    const start = toMs(timing.startAt);
    if (start - 1 > cursorInstant(cursor)) cursor = start - 1;
  }
  const end = Math.min(
    toMs(until),
    timing.endAt === undefined || timing.endAt === null ? Infinity : toMs(timing.endAt),
  );
  const from = cursorInstant(cursor);
  if (!(from < end)) return;
  // Any occurrence after `from` has a wall time after from + (smallest offset near it).
  const fromWall = Math.floor((from + rules.offsetRangeNear(from).min) / 1000) * 1000 - 1000;
  const pending: Occurrence[] = [];
  // Most days have no transition within a day of them: one offset, every wall time regular.
  let day = NaN;
  let quietOffset: number | null = null;
  for (const wall of wallTimesFrom(cron, fromWall)) {
    const d = floorDay(wall);
    if (d !== day) {
      day = d;
      quietOffset = rules.quietOffset(d - WINDOW_MS, d + DAY_MS + WINDOW_MS);
    }
    // No instant of this or a later wall time lies before `lower`: what is pending before it is final.
    const lower = wall - (quietOffset ?? rules.offsetRangeNear(wall).max);
    while (pending.length > 0 && pending[0]!.instant <= lower) yield pending.shift()!;
    if (lower >= end) return;
    const occurrences =
      quietOffset === null ? occurrencesOfWall(rules, policy, wall) : [regular(rules, wall, quietOffset)];
    for (const o of occurrences) {
      if (o.instant >= end || !isAfter(o, cursor)) continue;
      let i = pending.length;
      while (i > 0 && comparePositions(pending[i - 1]!, o) > 0) i--;
      pending.splice(i, 0, o);
    }
  }
  yield* pending;
}

function checkCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

/** Takes up to `n` items of a generator. */
export function take<T>(gen: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  if (n <= 0) return out;
  for (const x of gen) {
    out.push(x);
    if (out.length >= n) break;
  }
  return out;
}

/**
 * The next `count` occurrences strictly after `after` (an instant, or the position of the last
 * occurrence handled — use that to resume, since gap-shifted occurrences can share an instant).
 */
export function nextFireTimes(timing: ScheduleTiming, after: Cursor, count: number): Occurrence[] {
  checkCount('count', count);
  return take(occurrencesAfter(timing, after), count);
}

/** Occurrences with `from` ≤ instant < `to`, in order, at most `limit` of them. */
export function fireTimesBetween(
  timing: ScheduleTiming,
  from: Instant,
  to: Instant,
  limit: number,
): Occurrence[] {
  checkCount('limit', limit);
  return take(occurrencesAfter(timing, toMs(from) - 1, to), limit);
}
