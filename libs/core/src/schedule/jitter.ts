import { sha1 } from './identity.js';
import type { Occurrence } from './occurrences.js';

/**
 * Deterministic jitter: one offset per (tenant, schedule), drawn from a hash, so it is the same
 * after any restart and on any node, and every occurrence of the schedule moves by the same
 * amount (order and spacing kept). Spreads schedules that share a time (every tenant's "0 9 * * *")
 * without randomness at run time.
 */

const utf8 = new TextEncoder();

/** The schedule's offset, ms, uniform in [−allowanceMs, +allowanceMs]. */
export function jitterOffsetMs(tenant: string, scheduleId: string, allowanceMs: number): number {
  if (!Number.isSafeInteger(allowanceMs) || allowanceMs < 0 || allowanceMs > 2 ** 40) {
    throw new RangeError(`jitter allowance must be an integer in [0, 2^40] ms, got ${allowanceMs}`);
  }
  if (allowanceMs === 0) return 0;
  const h = sha1(utf8.encode(`kairos.jitter\n${tenant}\n${scheduleId}`));
  // 48 bits of the hash: the modulo bias is below 2^-7 even at the largest allowance.
  let n = 0;
  for (let i = 0; i < 6; i++) n = n * 256 + h[i]!;
  return (n % (2 * allowanceMs + 1)) - allowanceMs;
}

/**
 * When an occurrence fires: its instant plus the offset, but never before the previous
 * occurrence's fire time (`previousFireAt`, null when there is none) — which a constant offset
 * already guarantees between occurrences of one run of the schedule, and this keeps after a
 * change of allowance or a catch-up run fired late.
 */
export function jitteredFireAt(instant: number, offsetMs: number, previousFireAt: number | null): number {
  const at = instant + offsetMs;
  return previousFireAt !== null && at < previousFireAt ? previousFireAt : at;
}

export interface JitteredOccurrence extends Occurrence {
  /** When it is to fire, UTC ms: instant + jitter, never before the previous one's fireAt. */
  readonly fireAt: number;
}

/** Applies the offset to consecutive occurrences, chaining each one's fireAt into the next. */
export function applyJitter(
  occurrences: readonly Occurrence[],
  offsetMs: number,
  previousFireAt: number | null = null,
): JitteredOccurrence[] {
  let prev = previousFireAt;
  return occurrences.map((o) => {
    const fireAt = jitteredFireAt(o.instant, offsetMs, prev);
    prev = fireAt;
    return { ...o, fireAt };
  });
}
