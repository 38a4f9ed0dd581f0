import type { Alert } from '../canary.js';
import type { ScheduleState } from './runs.js';

/**
 * The dead-man's switch of a schedule: a run not SUCCEEDED within the schedule's sla_ms of its fire
 * time is late, and the schedule is late (alerting `schedule_sla_missed`) from then until a run of a
 * later occurrence succeeds. Pure; the tracker's SLA check judges runs in PostgreSQL by the same rule.
 */

export const SCHEDULE_HEALTHS = ['ok', 'late', 'unknown'] as const;
/** ok: within its SLA; late: in breach; unknown: no SLA, not active, or nothing judged yet. */
export type ScheduleHealth = (typeof SCHEDULE_HEALTHS)[number];

/** The alert raised for a schedule in breach of its SLA. */
export const SLA_ALERT = 'schedule_sla_missed';

/** What happened to a schedule's runs (all zero / null before its first). */
export interface ScheduleRunFacts {
  /** When the newest run that SUCCEEDED finished, and its occurrence time. */
  readonly lastSuccessAt: Date | null;
  readonly lastSuccessOccurrenceAt: Date | null;
  /** Runs judged late, each once. */
  readonly lateRuns: number;
  /** Occurrence time of the newest run judged late. */
  readonly lateOccurrenceAt: Date | null;
  /** Runs that fired at or before this have been judged. */
  readonly judgedUntil: Date | null;
  /** Runs the misfire policy skipped (jobs; dropped occurrences are the schedule's misfiresSkipped). */
  readonly misfiredRuns: number;
  /** Runs the overlap policy skipped, or skipped while the schedule was paused. */
  readonly skippedRuns: number;
}

export const NO_RUN_FACTS: ScheduleRunFacts = {
  lastSuccessAt: null,
  lastSuccessOccurrenceAt: null,
  lateRuns: 0,
  lateOccurrenceAt: null,
  judgedUntil: null,
  misfiredRuns: 0,
  skippedRuns: 0,
};

/** The SLA part of a schedule the verdict needs. */
export interface SlaSubject {
  readonly state: ScheduleState;
  readonly slaMs: number | null;
  readonly slaSince: Date | null;
}

/**
 * Whether the schedule is in breach: a run judged late since the SLA was set, and no run of a later
 * occurrence succeeded since (a success of an earlier one does not make up for it).
 */
export function slaBreached(s: SlaSubject, f: ScheduleRunFacts): boolean {
  if (s.slaMs === null || s.slaSince === null || s.state !== 'ACTIVE') return false;
  const late = f.lateOccurrenceAt?.getTime();
  if (late === undefined || late < s.slaSince.getTime()) return false;
  const success = f.lastSuccessOccurrenceAt?.getTime();
  return success === undefined || success < late;
}

/** The schedule's health: late in breach; ok once a run was judged or succeeded under its SLA. */
export function scheduleHealth(s: SlaSubject, f: ScheduleRunFacts): ScheduleHealth {
  if (s.slaMs === null || s.slaSince === null || s.state !== 'ACTIVE') return 'unknown';
  if (slaBreached(s, f)) return 'late';
  const since = s.slaSince.getTime();
  const judged = (f.judgedUntil?.getTime() ?? -Infinity) >= since;
  const succeeded = (f.lastSuccessAt?.getTime() ?? -Infinity) >= since;
  return judged || succeeded ? 'ok' : 'unknown';
}

/** The alert of a schedule in breach (labels: schedule and tenant). */
export function slaAlert(scheduleId: string, tenantId: string, slaMs: number, lateOccurrenceAt: Date): Alert {
  return {
    name: SLA_ALERT,
    labels: { schedule: scheduleId, tenant: tenantId },
    summary:
      `schedule ${scheduleId} of tenant ${tenantId}: its run of ${lateOccurrenceAt.toISOString()} did not ` +
      `succeed within sla_ms ${slaMs} of its fire time, and no later run has succeeded since`,
  };
}

/**
 * How long the SLA check sleeps, ms: until the next run's deadline (`untilMs` away; null: none
 * known), but at least `minMs` (a deadline that stays due is not polled faster) and at most `maxMs`
 * (runs created since, such as a trigger, are seen within it).
 */
export function slaSleepMs(untilMs: number | null, minMs: number, maxMs: number): number {
  return Math.min(maxMs, Math.max(minMs, untilMs ?? maxMs));
}
