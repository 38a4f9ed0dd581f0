import type { MisfirePolicy, OverlapPolicy } from './policy.js';
import type { ScheduleSpec } from './spec.js';

/**
 * What happens to a schedule's runs once their occurrences exist: the schedule's lifecycle, the
 * misfire decision over runs that are already late, the overlap decision when an occurrence comes
 * due, and the spacing of backfill runs. Pure functions; the command handlers, the generator and
 * the dispatcher apply them inside their transactions.
 */

export const SCHEDULE_STATES = ['ACTIVE', 'PAUSED', 'DELETED'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];

/**
 * How a run of a schedule came about:
 *   regular   an occurrence generated ahead of its time
 *   catch_up  a missed occurrence the misfire policy chose to run late
 *   trigger   trigger-now: an extra run, its own occurrence
 *   backfill  an occurrence of a past range, run on request
 */
export const RUN_KINDS = ['regular', 'catch_up', 'trigger', 'backfill'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** A stored schedule: the validated spec plus its identity, lifecycle and generation cursor. */
export interface Schedule extends ScheduleSpec {
  readonly id: string;
  readonly idempotencyKey: string | null;
  readonly state: ScheduleState;
  /** Goes up with every change (update, pause, resume, delete). */
  readonly version: number;
  /** An occurrence at most this late when it comes due is on time; later, the misfire policy decides. */
  readonly misfireToleranceMs: number;
  /** The schedule id: every run of the schedule lands in one partition. */
  readonly routingKey: string;
  readonly shard: number;
  /** Generation resumes strictly after this position (nominal null: after the instant). */
  readonly cursor: { readonly instant: number; readonly nominal: string | null };
  /** Fire time of the newest generated occurrence (jitter never puts the next one before it). */
  readonly lastFireAt: Date | null;
  /** Instant of the first occurrence not generated yet; null when the schedule has no more. */
  readonly nextFireAt: Date | null;
  /** When the generator next looks at the schedule. */
  readonly generateAt: Date | null;
  /** Backfill runs already requested are spaced until this time. */
  readonly backfillNextAt: Date | null;
  /** Missed occurrences never generated because the misfire policy dropped them. */
  readonly misfiresSkipped: number;
  /** When slaMs was set or last changed: runs that fired before are not judged (null: no SLA). */
  readonly slaSince: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly pausedAt: Date | null;
  readonly deletedAt: Date | null;
}

/** How many missed runs a misfire policy lets run at most. */
export function misfireQuota(policy: MisfirePolicy): number {
  switch (policy.kind) {
    case 'skip':
      return 0;
    case 'fire_latest':
      return 1;
    case 'fire_all':
    case 'within':
      return policy.maxCount;
  }
}

/**
 * Of the runs that missed their time (oldest first; `fireAt` their scheduled fire time, UTC ms),
 * which still run at `nowMs` under the policy: none (skip), the newest (fire_latest), the newest
 * maxCount (fire_all), or the newest maxCount of those younger than the window (within). The rest
 * are dropped. Returns both, each oldest first.
 *
 * `alreadyRun`: catch-up runs of the same outage dispatched before this decision (a slow recovery
 * can let more runs miss after one catch-up was dispatched). They count against the policy's
 * quota, so one outage never gets more catch-up runs than the policy promises.
 */
export function selectMissedRuns<T extends { readonly fireAt: number }>(
  policy: MisfirePolicy,
  missed: readonly T[],
  nowMs: number,
  alreadyRun = 0,
): { run: T[]; drop: T[] } {
  const eligible =
    policy.kind === 'within' ? missed.filter((m) => m.fireAt > nowMs - policy.windowMs) : [...missed];
  const quota = Math.max(0, misfireQuota(policy) - alreadyRun);
  const run = quota === 0 ? [] : eligible.slice(-quota);
  const kept = new Set(run);
  return { run, drop: missed.filter((m) => !kept.has(m)) };
}

/** What the dispatcher does with an occurrence that came due. */
export type OverlapAction =
  /** Dispatch it. */
  | 'dispatch'
  /** Record it SKIPPED: the previous run is still going (skip, or a second waiter under buffer_one). */
  | 'skip'
  /** Keep it waiting (buffer_one): look again shortly. */
  | 'wait'
  /** Cancel the runs still going, then dispatch it (cancel_previous). */
  | 'cancel_previous';

export interface OverlapState {
  /** Another run of the schedule was dispatched and has not finished (retries between attempts count). */
  readonly running: boolean;
  /** An older occurrence of the schedule is already waiting for it (buffer_one). */
  readonly waiting: boolean;
}

/**
 * The overlap decision for one occurrence that came due, given the schedule's other runs. Applied
 * to the occurrences due at once oldest first, each seeing the effect of the ones before it
 * (nextOverlapState).
 */
export function decideOverlap(policy: OverlapPolicy, state: OverlapState): OverlapAction {
  if (!state.running) return state.waiting && policy === 'buffer_one' ? 'skip' : 'dispatch';
  switch (policy) {
    case 'allow':
      return 'dispatch';
    case 'skip':
      return 'skip';
    case 'buffer_one':
      return state.waiting ? 'skip' : 'wait';
    case 'cancel_previous':
      return 'cancel_previous';
  }
}

/** The state the next occurrence of the same batch sees after `action`. */
export function nextOverlapState(state: OverlapState, action: OverlapAction): OverlapState {
  switch (action) {
    case 'dispatch':
    case 'cancel_previous':
      return { running: true, waiting: state.waiting };
    case 'wait':
      return { running: state.running, waiting: true };
    case 'skip':
      return state;
  }
}

/** Default pace of backfill runs: at most this many come due per second. */
export const DEFAULT_BACKFILL_RATE_PER_SEC = 10;
/** Default (and largest allowed) number of runs one backfill request may create. */
export const DEFAULT_BACKFILL_MAX_COUNT = 1000;

/**
 * Due times of `count` backfill runs at no more than `ratePerSec` per second: the first at
 * `startMs`, each next one 1000 / rate ms later (rounded up, so the rate is never exceeded).
 */
export function spreadDueTimes(count: number, startMs: number, ratePerSec: number): number[] {
  if (!(ratePerSec > 0)) throw new RangeError(`ratePerSec must be > 0, got ${ratePerSec}`);
  const step = Math.ceil(1000 / ratePerSec);
  return Array.from({ length: count }, (_, i) => startMs + i * step);
}

/** The wire form (as in a create request) of a validated spec: what PATCH merges into. */
export function scheduleRequestOf(spec: ScheduleSpec): Record<string, unknown> {
  const m = spec.misfire;
  return {
    tenant: spec.tenantId,
    cron: spec.cron,
    time_zone: spec.timeZone,
    ...(spec.startAt ? { start_at: spec.startAt.toISOString() } : {}),
    ...(spec.endAt ? { end_at: spec.endAt.toISOString() } : {}),
    job: {
      type: spec.job.type,
      resource_class: spec.job.resourceClass,
      payload: JSON.parse(spec.job.payload) as unknown,
      max_attempts: spec.job.maxAttempts,
      retry: {
        base_ms: spec.job.retry.baseMs,
        cap_ms: spec.job.retry.capMs,
        jitter_ms: spec.job.retry.jitterMs,
      },
      ...(spec.job.deadlineMs === null ? {} : { deadline_ms: spec.job.deadlineMs }),
    },
    dst: { gap: spec.dst.gap, overlap: spec.dst.overlap },
    misfire:
      m.kind === 'fire_all'
        ? { kind: m.kind, max_count: m.maxCount }
        : m.kind === 'within'
          ? { kind: m.kind, window_ms: m.windowMs, max_count: m.maxCount }
          : { kind: m.kind },
    overlap: spec.overlap,
    jitter_ms: spec.jitterMs,
    ...(spec.slaMs === null ? {} : { sla_ms: spec.slaMs }),
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * JSON Merge Patch (RFC 7396): objects merge key by key, `null` removes a key, anything else
 * (arrays and scalars included) replaces. A job's `payload` is replaced whole, not merged: it is the
 * user's data, and a partial payload merge would be a surprise.
 */
export function mergePatch(target: unknown, patch: unknown, path: readonly string[] = []): unknown {
  if (!isPlainObject(patch) || (path.length === 2 && path[0] === 'job' && path[1] === 'payload')) {
    return patch;
  }
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v, [...path, k]);
  }
  return out;
}
