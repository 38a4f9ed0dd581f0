import { nextFireTimes, type Cursor, type OccurrenceKind } from './occurrences.js';
import type { ScheduleTiming } from './policy.js';
import { jitteredFireAt } from './jitter.js';

/** One upcoming fire time, as the API shows it. */
export interface PreviewEntry {
  /** Nominal wall-clock time and zone: `2026-03-08T02:30:00[America/New_York]`. */
  readonly nominal: string;
  readonly kind: OccurrenceKind;
  /** The occurrence's instant, ISO UTC: `2026-03-08T07:00:00.000Z`. */
  readonly instant: string;
  /** Local wall-clock time at that instant, ISO with offset: `2026-03-08T03:00:00-04:00`. */
  readonly local: string;
  /** When it will fire once the schedule's jitter is applied, ISO UTC (= instant without jitter). */
  readonly fireAt: string;
}

/**
 * The next `count` fire times after `after`, as absolute instants and local wall-clock times.
 * `jitterOffsetMs` is the schedule's offset (jitterOffsetMs(tenant, id, allowance)), 0 for none.
 */
export function previewFireTimes(
  timing: ScheduleTiming,
  after: Cursor,
  count: number,
  jitterOffsetMs = 0,
): PreviewEntry[] {
  let prev: number | null = null;
  return nextFireTimes(timing, after, count).map((o) => {
    const fireAt = jitteredFireAt(o.instant, jitterOffsetMs, prev);
    prev = fireAt;
    return {
      nominal: o.nominal,
      kind: o.kind,
      instant: new Date(o.instant).toISOString(),
      local: o.local,
      fireAt: new Date(fireAt).toISOString(),
    };
  });
}
