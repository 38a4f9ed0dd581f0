/**
 * The per-schedule policies and their defaults (the reasons are in the README's schedule section
 * and repeated here, next to the values).
 */

/** A wall time that does not exist (spring-forward gap). */
export const DST_GAP_POLICIES = ['shift', 'skip'] as const;
export type DstGapPolicy = (typeof DST_GAP_POLICIES)[number];

/** A wall time that exists twice (fall-back overlap). */
export const DST_OVERLAP_POLICIES = ['first', 'last', 'both'] as const;
export type DstOverlapPolicy = (typeof DST_OVERLAP_POLICIES)[number];

export interface DstPolicy {
  /** `shift`: fire at the first instant after the gap (02:30 in a 02:00→03:00 gap fires at 03:00); `skip`: not that day. */
  readonly gap: DstGapPolicy;
  /** `first`: the earlier instant only; `last`: the later only; `both`: twice, one occurrence each. */
  readonly overlap: DstOverlapPolicy;
}

/**
 * shift + first: a daily job still runs exactly once on both change days, and as early as the
 * day allows — nothing is lost and nothing doubled unless the schedule asks for it.
 */
export const DEFAULT_DST_POLICY: DstPolicy = { gap: 'shift', overlap: 'first' };

export const MISFIRE_KINDS = ['skip', 'fire_latest', 'fire_all', 'within'] as const;
export type MisfireKind = (typeof MISFIRE_KINDS)[number];

/** What to do, after downtime, with occurrences whose time passed without being fired. */
export type MisfirePolicy =
  /** None of them: resume from the next future time. */
  | { readonly kind: 'skip' }
  /** One catch-up run: the latest missed occurrence. */
  | { readonly kind: 'fire_latest' }
  /** The newest `maxCount` missed occurrences, oldest of them first. */
  | { readonly kind: 'fire_all'; readonly maxCount: number }
  /** Those younger than `windowMs` (at most the newest `maxCount`), oldest first. */
  | { readonly kind: 'within'; readonly windowMs: number; readonly maxCount: number };

/**
 * fire_latest: a missed schedule still runs once (most periodic work — sync, report, cleanup —
 * is caught up by one run), without the burst that firing every missed occurrence makes after a
 * long outage, and without the silent loss of `skip`. Quartz's default for cron triggers
 * (fire once now) and Kubernetes CronJob's behaviour make the same choice.
 */
export const DEFAULT_MISFIRE_POLICY: MisfirePolicy = { kind: 'fire_latest' };

/** Largest max_count of fire_all and within: the biggest burst one catch-up may make. */
export const MAX_MISFIRE_COUNT = 1000;
/** Longest within window: 31 days. */
export const MAX_MISFIRE_WINDOW_MS = 31 * 86_400_000;

/** What happens when an occurrence comes due while the schedule's previous run is still running. */
export const OVERLAP_POLICIES = ['allow', 'skip', 'buffer_one', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/**
 * allow: the only policy that neither drops, delays nor cancels a run, so the default makes no
 * silent decision; Kairos jobs are idempotent and at-least-once already (a retry can overlap the
 * next occurrence whatever the policy), and allow needs no lookup of the previous run's state
 * before dispatch. Schedules whose runs must not overlap opt into skip, buffer_one or
 * cancel_previous.
 */
export const DEFAULT_OVERLAP_POLICY: OverlapPolicy = 'allow';

/** Largest jitter allowance: 1 h. Default 0: jitter moves a run away from its time, so it is opt-in. */
export const MAX_JITTER_MS = 3_600_000;

/** Longest deadline after an occurrence's fire time: 30 days. */
export const MAX_SCHEDULE_DEADLINE_MS = 30 * 86_400_000;

/**
 * Bounds of a schedule's SLA (how late after its fire time a run may succeed): at least 1 s (the
 * pipeline's own latency is a good part of that), at most 7 days.
 */
export const MIN_SLA_MS = 1000;
export const MAX_SLA_MS = 7 * 86_400_000;

/** When occurrences fire: the part of a schedule the occurrence functions read. */
export interface ScheduleTiming {
  /** 5 fields (minute first) or 6 (second first). */
  readonly cron: string;
  /** IANA zone the cron's wall-clock times are read in. */
  readonly timeZone: string;
  /** No occurrence before this instant (inclusive bound). */
  readonly startAt?: Date | number | null;
  /** No occurrence at or after this instant (exclusive bound). */
  readonly endAt?: Date | number | null;
  /** Defaults to DEFAULT_DST_POLICY, field by field. */
  readonly dst?: Partial<DstPolicy>;
}
