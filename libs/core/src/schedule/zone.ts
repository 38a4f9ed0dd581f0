import { IANAZone } from 'luxon';

/**
 * A zone's real rules, from luxon (which reads the tz database the runtime ships through Intl), at
 * the moment of use: offsets are looked up, never stored with a schedule. To keep the lookups
 * cheap the UTC offset transitions are found once per 28-day bucket (offsets sampled every 3 h,
 * each change bisected to the millisecond) and kept for the life of the process; the rules of a
 * zone do not change while a process runs. Two transitions less than 3 h apart that restore the
 * same offset would go unseen; the tz database has none.
 */

const MINUTE_MS = 60_000;
const BUCKET_MS = 28 * 86_400_000;
const SAMPLE_MS = 3 * 3_600_000;
/** Offsets lie within ±26 h (IANA uses −12 h to +14 h); a wall time's instants lie within this of it. */
export const WINDOW_MS = 26 * 3_600_000;

export interface Transition {
  /** First UTC ms with the new offset. */
  readonly at: number;
  /** Offsets before and from `at`, ms. */
  readonly before: number;
  readonly after: number;
}

interface Bucket {
  /** Offset in force just before the bucket starts. */
  readonly startOffset: number;
  /** Transitions with `at` inside the bucket, ascending. */
  readonly transitions: readonly Transition[];
}

/** How one nominal wall time maps to instants in a zone. */
export type WallResolution =
  /** The wall time exists once or more: its instants, ascending, with the offset at each. */
  | { readonly kind: 'exists'; readonly instants: readonly { instant: number; offset: number }[] }
  /** It falls in a gap: the first instant after the gap and the offset from then on. */
  | { readonly kind: 'gap'; readonly gapEnd: number; readonly offset: number };

export type ZoneCheck = { ok: true; name: string } | { ok: false; reason: string };

/**
 * Validates an IANA zone name with luxon. Fixed UTC offsets (+05:30) are refused: a schedule
 * needs a zone's rules, not one offset. A name in the wrong case is given its canonical case.
 */
export function checkTimeZone(name: string): ZoneCheck {
  if (/^[-+\u2212]|^UTC?[-+]|^GMT[-+]/i.test(name)) {
    return { ok: false, reason: `"${name}" is a fixed UTC offset; give an IANA zone such as Europe/London` };
  }
  if (!IANAZone.isValidZone(name)) {
    return { ok: false, reason: `"${name}" is not an IANA time zone (for example America/New_York)` };
  }
  return { ok: true, name: canonicalCase(name) };
}

let knownNames: Map<string, string> | null = null;

/**
 * The name in the case the runtime's zone list spells it (america/new_york → America/New_York),
 * or as given when the list has it under another id (ICU lists Asia/Calcutta, not Asia/Kolkata).
 */
function canonicalCase(name: string): string {
  knownNames ??= new Map(Intl.supportedValuesOf('timeZone').map((n) => [n.toLowerCase(), n]));
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  if (resolved.toLowerCase() === name.toLowerCase()) return resolved;
  return knownNames.get(name.toLowerCase()) ?? name;
}

export class ZoneRules {
  private static readonly instances = new Map<string, ZoneRules>();

  static of(name: string): ZoneRules {
    let rules = ZoneRules.instances.get(name);
    if (!rules) {
      const check = checkTimeZone(name);
      if (!check.ok) throw new RangeError(check.reason);
      rules = ZoneRules.instances.get(check.name) ?? new ZoneRules(check.name);
      ZoneRules.instances.set(name, rules);
      ZoneRules.instances.set(check.name, rules);
    }
    return rules;
  }

  private readonly zone: IANAZone;
  private readonly buckets = new Map<number, Bucket>();

  /** Canonical name. */
  private constructor(readonly name: string) {
    this.zone = IANAZone.create(name);
  }

  /** The zone's offset at a UTC ms, straight from luxon (uncached), ms. */
  rawOffset(instant: number): number {
    return this.zone.offset(instant) * MINUTE_MS;
  }

  /** The offset at a UTC ms, ms. */
  offsetAt(instant: number): number {
    const b = this.bucket(Math.floor(instant / BUCKET_MS));
    let offset = b.startOffset;
    for (const t of b.transitions) {
      if (t.at > instant) break;
      offset = t.after;
    }
    return offset;
  }

  /** Transitions with `at` in [from, to], ascending. */
  transitionsBetween(from: number, to: number): Transition[] {
    const out: Transition[] = [];
    for (let k = Math.floor(from / BUCKET_MS); k <= Math.floor(to / BUCKET_MS); k++) {
      for (const t of this.bucket(k).transitions) if (t.at >= from && t.at <= to) out.push(t);
    }
    return out;
  }

  /** The offset in force throughout [from, to] if no transition falls in it, else null. */
  quietOffset(from: number, to: number): number | null {
    return this.transitionsBetween(from, to).length === 0 ? this.offsetAt(from) : null;
  }

  /** Smallest and largest offsets in force within ±26 h of a UTC ms (or of a floating wall ms). */
  offsetRangeNear(ms: number): { min: number; max: number } {
    let min = this.offsetAt(ms - WINDOW_MS);
    let max = min;
    for (const t of this.transitionsBetween(ms - WINDOW_MS, ms + WINDOW_MS)) {
      min = Math.min(min, t.after);
      max = Math.max(max, t.after);
    }
    return { min, max };
  }

  /**
   * The instants whose local wall-clock time is `wall` (floating ms): every instant t with
   * t + offset(t) = wall, one per offset segment of the zone that contains W − offset; none in a
   * spring-forward gap, two in a fall-back overlap.
   */
  resolve(wall: number): WallResolution {
    const lo = wall - WINDOW_MS;
    const hi = wall + WINDOW_MS;
    const transitions = this.transitionsBetween(lo, hi);
    const instants: { instant: number; offset: number }[] = [];
    let segStart = -Infinity;
    let offset = this.offsetAt(lo);
    for (let i = 0; i <= transitions.length; i++) {
      const next = transitions[i];
      const segEnd = next ? next.at : Infinity;
      const t = wall - offset;
      if (t >= segStart && t < segEnd) instants.push({ instant: t, offset });
      if (next) {
        segStart = next.at;
        offset = next.after;
      }
    }
    if (instants.length > 0) return { kind: 'exists', instants };
    // In a gap: the wall clock jumped over `wall` at some transition.
    for (const t of transitions) {
      if (t.at + t.before <= wall && wall < t.at + t.after)
        return { kind: 'gap', gapEnd: t.at, offset: t.after };
    }
    /* istanbul ignore next -- every wall time either exists or lies in a gap */
    throw new Error(
      `zone ${this.name}: wall time ${new Date(wall).toISOString()} neither exists nor falls in a gap`,
    );
  }

  private bucket(k: number): Bucket {
    let b = this.buckets.get(k);
    if (b) return b;
    const start = k * BUCKET_MS;
    const end = start + BUCKET_MS;
    const transitions: Transition[] = [];
    let a = start - 1;
    let oa = this.rawOffset(a);
    const startOffset = oa;
    for (let s = start; ; s = Math.min(s + SAMPLE_MS, end - 1)) {
      const os = this.rawOffset(s);
      if (os !== oa) this.bisect(a, oa, s, os, transitions);
      a = s;
      oa = os;
      if (s === end - 1) break;
    }
    b = { startOffset, transitions };
    this.buckets.set(k, b);
    return b;
  }

  /** Finds every change of offset in (a, b] (offset(a) = oa ≠ offset(b) = ob), in order. */
  private bisect(a: number, oa: number, b: number, ob: number, out: Transition[]): void {
    if (oa === ob) return;
    if (b - a === 1) {
      out.push({ at: b, before: oa, after: ob });
      return;
    }
    const m = Math.floor((a + b) / 2);
    const om = this.rawOffset(m);
    this.bisect(a, oa, m, om, out);
    this.bisect(m, om, b, ob, out);
  }
}
