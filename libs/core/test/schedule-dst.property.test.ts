/**
 * Fire times against luxon over two years (2026-01-01 to 2028-01-01, local days) in five zones:
 * America/New_York and Europe/London (1 h DST), Australia/Lord_Howe (30-minute DST),
 * Asia/Kolkata (none, +05:30) and Pacific/Chatham (+12:45/+13:45, changes at 02:45 local).
 *
 * The oracle is independent of the implementation: which wall times match is written out by hand
 * per expression, and the instants of a wall time come from luxon alone (Temporal's method: try
 * the offsets in force a day before and a day after, keep those that give the wall time back).
 */
import fc from 'fast-check';
import { CronExpressionParser } from 'cron-parser';
import { DateTime } from 'luxon';
import { describe, expect, test } from 'vitest';
import {
  fireTimesBetween,
  nextFireTimes,
  type DstPolicy,
  type Occurrence,
  type OccurrenceKind,
  type ScheduleTiming,
} from '@kairos/core';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MIN = 60_000;
const ZONES = ['America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham'];
const FROM_DAY = Date.UTC(2026, 0, 1);
const TO_DAY = Date.UTC(2028, 0, 1);

const range = (from: number, to: number, step = 1) =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
/** Seconds of the day for every combination of hours, minutes and seconds. */
const at = (hours: number[], minutes: number[], seconds = [0]) =>
  hours.flatMap((h) => minutes.flatMap((m) => seconds.map((s) => h * 3600 + m * 60 + s)));

interface CronCase {
  readonly cron: string;
  /** The matching seconds of a day, by day of week (0 = Sunday): written out, not parsed. */
  readonly times: (dow: number) => number[];
}

const CRONS: CronCase[] = [
  { cron: '*/15 * * * *', times: () => at(range(0, 23), [0, 15, 30, 45]) },
  { cron: '30 * * * *', times: () => at(range(0, 23), [30]) },
  { cron: '30 2 * * *', times: () => at([2], [30]) },
  { cron: '30 1 * * *', times: () => at([1], [30]) },
  { cron: '0 0 * * 0', times: (dow) => (dow === 0 ? [0] : []) },
  { cron: '0 2 * * *', times: () => at([2], [0]) },
  { cron: '45 2 * * *', times: () => at([2], [45]) },
  { cron: '0 3 * * *', times: () => at([3], [0]) },
  { cron: '15 */10 1-3 * * *', times: () => at([1, 2, 3], range(0, 50, 10), [15]) },
];

const POLICIES: DstPolicy[] = [
  { gap: 'shift', overlap: 'first' },
  { gap: 'skip', overlap: 'last' },
  { gap: 'shift', overlap: 'both' },
];

const offsetMs = (zone: string, instant: number) => DateTime.fromMillis(instant, { zone }).offset * MIN;

/** The local wall time at an instant, as floating ms (wall clock read as UTC), by luxon. */
function wallAt(zone: string, instant: number): number {
  const d = DateTime.fromMillis(instant, { zone });
  return Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second);
}

/** Every instant whose local time in `zone` is the floating wall time `wall`, ascending (luxon only). */
function luxonInstants(zone: string, wall: number): number[] {
  const offsets = new Set([offsetMs(zone, wall - DAY), offsetMs(zone, wall + DAY)]);
  return [...offsets]
    .map((o) => wall - o)
    .filter((t) => wallAt(zone, t) === wall)
    .sort((a, b) => a - b);
}

/** For a wall time in a gap: the first instant after the gap, stepping minute by minute with luxon. */
function luxonGapEnd(zone: string, wall: number): number {
  const after = offsetMs(zone, wall + DAY);
  // Before the transition: the wall time read with the later offset (transitions fall on whole minutes).
  let t = Math.floor((wall - after) / MIN) * MIN;
  while (offsetMs(zone, t) !== after) t += MIN;
  expect(wallAt(zone, t)).toBeGreaterThan(wall);
  expect(wallAt(zone, t - 1000)).toBeLessThan(wall);
  return t;
}

const iso = (wall: number) => new Date(wall).toISOString().slice(0, 19);

interface WallFact {
  readonly nominal: string;
  readonly wall: number;
  /** The wall time's instants (luxon); for a gap, none and the gap's end. */
  readonly instants: readonly number[];
  readonly gapEnd?: number;
}

/**
 * Per UTC-midnight day of the range: the offset if the local day has no transition, else null.
 * The instants of a local day lie within [day − 14 h, day + 36 h]: if the offset is the same at
 * both ends and in the middle, no transition falls in it and every wall time of it exists once.
 */
const plainDays = new Map<string, (number | null)[]>();
function plainOffsets(zone: string): (number | null)[] {
  let days = plainDays.get(zone);
  if (!days) {
    days = [];
    for (let day = FROM_DAY; day < TO_DAY; day += DAY) {
      const o = offsetMs(zone, day - 15 * HOUR);
      const plain = o === offsetMs(zone, day + 37 * HOUR) && o === offsetMs(zone, day + 11 * HOUR);
      days.push(plain ? o : null);
    }
    plainDays.set(zone, days);
  }
  return days;
}

/** Each matching wall time of each local day, resolved by luxon. */
function oracle(zone: string, c: CronCase): WallFact[] {
  const facts: WallFact[] = [];
  const offsets = plainOffsets(zone);
  const byDow = range(0, 6).map((dow) => c.times(dow));
  for (let i = 0, day = FROM_DAY; day < TO_DAY; i++, day += DAY) {
    const o = offsets[i]!;
    for (const s of byDow[new Date(day).getUTCDay()]!) {
      const wall = day + s * 1000;
      const nominal = `${iso(wall)}[${zone}]`;
      if (o !== null) {
        facts.push({ nominal, wall, instants: [wall - o] });
      } else {
        const instants = luxonInstants(zone, wall);
        facts.push(
          instants.length > 0
            ? { nominal, wall, instants }
            : { nominal, wall, instants, gapEnd: luxonGapEnd(zone, wall) },
        );
      }
    }
  }
  return facts;
}

interface Expected {
  readonly nominal: string;
  readonly instant: number;
  readonly kind: OccurrenceKind;
}

/** What the policy promises for each wall time: 1 instant, 0 for gap+skip, 2 for overlap+both. */
function expected(facts: readonly WallFact[], policy: DstPolicy): Expected[] {
  const out: Expected[] = [];
  for (const f of facts) {
    const n = f.instants.length;
    if (n === 0) {
      if (policy.gap === 'shift') out.push({ nominal: f.nominal, instant: f.gapEnd!, kind: 'gap-shifted' });
    } else if (n === 1) {
      out.push({ nominal: f.nominal, instant: f.instants[0]!, kind: 'regular' });
    } else {
      expect(n).toBe(2);
      if (policy.overlap !== 'last')
        out.push({ nominal: f.nominal, instant: f.instants[0]!, kind: 'overlap-first' });
      if (policy.overlap !== 'first')
        out.push({ nominal: f.nominal, instant: f.instants[1]!, kind: 'overlap-last' });
    }
  }
  return out.sort(
    (a, b) => a.instant - b.instant || (a.nominal < b.nominal ? -1 : a.nominal > b.nominal ? 1 : 0),
  );
}

const key = (o: Expected) => `${o.nominal} ${new Date(o.instant).toISOString()} ${o.kind}`;

/** Instants never decrease; equal instants only where a gap time was shifted onto the gap's end. */
function checkOrder(os: readonly Occurrence[]): void {
  for (let i = 1; i < os.length; i++) {
    const a = os[i - 1]!;
    const b = os[i]!;
    if (a.instant === b.instant) {
      expect(a.kind === 'gap-shifted' || b.kind === 'gap-shifted', `${a.nominal} ${b.nominal}`).toBe(true);
      expect(a.nominal < b.nominal).toBe(true);
    } else {
      expect(a.instant, `${a.nominal} then ${b.nominal}`).toBeLessThan(b.instant);
    }
  }
}

function localIso(zone: string, instant: number): string {
  return DateTime.fromMillis(instant, { zone })
    .toISO({ suppressMilliseconds: true })!
    .replace(/Z$/, '+00:00');
}

describe('two years of fire times against luxon', () => {
  for (const zone of ZONES) {
    test(
      zone,
      () => {
        const from = DateTime.fromMillis(FROM_DAY, { zone: 'UTC' })
          .setZone(zone, { keepLocalTime: true })
          .toMillis();
        const to = DateTime.fromMillis(TO_DAY, { zone: 'UTC' })
          .setZone(zone, { keepLocalTime: true })
          .toMillis();
        for (const c of CRONS) {
          const facts = oracle(zone, c);
          for (const dst of POLICIES) {
            const timing: ScheduleTiming = { cron: c.cron, timeZone: zone, dst };
            const got = fireTimesBetween(timing, from, to, 1_000_000);
            const want = expected(facts, dst);
            const bad = want.findIndex(
              (w, k) =>
                got[k]?.nominal !== w.nominal || got[k]?.instant !== w.instant || got[k]?.kind !== w.kind,
            );
            if (bad >= 0 || got.length !== want.length) {
              const k = bad >= 0 ? bad : want.length;
              expect(got.slice(k, k + 3).map(key), `${c.cron} ${JSON.stringify(dst)}`).toEqual(
                want.slice(k, k + 3).map(key),
              );
            }
            checkOrder(got);
            // Off the plain days, each occurrence's local time is luxon's reading of its instant.
            for (const o of got) if (o.kind !== 'regular') expect(o.local).toBe(localIso(zone, o.instant));
          }
        }
      },
      180_000,
    );
  }

  test('the zones do change: DST transitions seen in two years', () => {
    const kinds = (zone: string) =>
      new Set(
        fireTimesBetween(
          { cron: '*/15 * * * *', timeZone: zone, dst: { overlap: 'both' } },
          Date.UTC(2026, 0, 1),
          Date.UTC(2028, 0, 1),
          1_000_000,
        ).map((o) => o.kind),
      );
    expect(kinds('Asia/Kolkata')).toEqual(new Set(['regular']));
    for (const zone of ZONES.filter((z) => z !== 'Asia/Kolkata')) {
      expect(kinds(zone)).toEqual(new Set(['regular', 'gap-shifted', 'overlap-first', 'overlap-last']));
    }
  }, 120_000);
});

/** UTC days (their midnight) in which the zone's offset changes, 2026–2027. */
function changeDays(zone: string): number[] {
  const out: number[] = [];
  for (let d = FROM_DAY; d < TO_DAY; d += DAY) if (offsetMs(zone, d) !== offsetMs(zone, d + DAY)) out.push(d);
  return out;
}

const zoneArb = fc.constantFrom(...ZONES);
/** A zone and an instant: anywhere in the two years, or (mostly) within a day of one of its changes. */
const zoneAndInstantArb = zoneArb.chain((zone) => {
  const days = changeDays(zone);
  const anywhere = fc.integer({ min: FROM_DAY, max: TO_DAY });
  const near =
    days.length === 0
      ? anywhere
      : fc.constantFrom(...days).chain((d) => fc.integer({ min: d - 12 * HOUR, max: d + DAY }));
  return fc.tuple(
    fc.constant(zone),
    fc.oneof({ arbitrary: anywhere, weight: 1 }, { arbitrary: near, weight: 3 }),
  );
});
const cronArb = fc.constantFrom(
  ...CRONS.map((c) => c.cron),
  '*/7 1-3 * * *',
  '0 0 L * *',
  '5 4 * * 1-5',
  '*/30 * * * * *',
);
const policyArb = fc.record({
  gap: fc.constantFrom('shift' as const, 'skip' as const),
  overlap: fc.constantFrom('first' as const, 'last' as const, 'both' as const),
});
const instantArb = fc.integer({ min: FROM_DAY, max: TO_DAY });

describe('properties', () => {
  test('every occurrence is what luxon says its wall time is, under its policy', () => {
    fc.assert(
      fc.property(
        zoneAndInstantArb,
        cronArb,
        policyArb,
        fc.integer({ min: 1, max: 40 }),
        ([zone, after], cron, dst, n) => {
          const os = nextFireTimes({ cron, timeZone: zone, dst }, after, n);
          expect(os).toHaveLength(n);
          expect(os[0]!.instant).toBeGreaterThan(after);
          checkOrder(os);
          for (const o of os) {
            const wall = Date.parse(o.nominal.slice(0, o.nominal.indexOf('[')) + 'Z');
            const instants = luxonInstants(zone, wall);
            expect(o.local).toBe(localIso(zone, o.instant));
            switch (o.kind) {
              case 'regular':
                expect(instants).toEqual([o.instant]);
                break;
              case 'overlap-first':
                expect(dst.overlap).not.toBe('last');
                expect([instants.length, instants[0]]).toEqual([2, o.instant]);
                break;
              case 'overlap-last':
                expect(dst.overlap).not.toBe('first');
                expect([instants.length, instants[1]]).toEqual([2, o.instant]);
                break;
              case 'gap-shifted':
                expect(dst.gap).toBe('shift');
                expect(instants).toEqual([]);
                expect(o.instant).toBe(luxonGapEnd(zone, wall));
                break;
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);

  test('resuming after any occurrence continues the same sequence; between agrees with next', () => {
    fc.assert(
      fc.property(
        zoneAndInstantArb,
        cronArb,
        policyArb,
        fc.integer({ min: 2, max: 30 }),
        fc.nat(),
        ([zone, after], cron, dst, n, k0) => {
          const timing = { cron, timeZone: zone, dst };
          const all = nextFireTimes(timing, after, n);
          const k = 1 + (k0 % (n - 1));
          expect([...all.slice(0, k), ...nextFireTimes(timing, all[k - 1]!, n - k)]).toEqual(all);
          const between = fireTimesBetween(timing, after + 1, all.at(-1)!.instant + 1, 10_000);
          expect(between.slice(0, n)).toEqual(all);
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);

  test("the nominal enumeration is cron-parser's own, in a zone without DST", () => {
    const field = (xs: string[]) => fc.constantFrom(...xs);
    const cron = fc
      .tuple(
        field(['0', '*/20', '5,35', '*']),
        field(['*', '*/7', '0', '5,35', '10-20/5']),
        field(['*', '3', '*/5', '1-3', '22']),
        field(['*', '1', '15', 'L', '1-10/3', '31']),
        field(['*', '2', '*/3', 'jan,jul']),
        field(['*', '0', '1-5', '5L', '2#1', 'sun']),
      )
      .map(([s, ...rest]) => (s === '0' ? rest.join(' ') : [s, ...rest].join(' ')));
    fc.assert(
      fc.property(cron, instantArb, fc.integer({ min: 1, max: 25 }), (expr, after, n) => {
        let theirs: number[];
        try {
          theirs = CronExpressionParser.parse(expr, { tz: 'UTC', currentDate: after })
            .take(n)
            .map((d) => d.getTime());
        } catch {
          return; // an expression cron-parser refuses (31 February…) is refused by compileCron too
        }
        const ours = nextFireTimes({ cron: expr, timeZone: 'UTC' }, after, n).map((o) => o.instant);
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 300 },
    );
  }, 120_000);
});
