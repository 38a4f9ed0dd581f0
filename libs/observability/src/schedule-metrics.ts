import { Counter, type Registry } from 'prom-client';
import { cappedLabel } from './capped-label.js';

export const SCHEDULE_RUN_OUTCOMES = ['late', 'misfired', 'skipped'] as const;
export type ScheduleRunOutcome = (typeof SCHEDULE_RUN_OUTCOMES)[number];

/** Runs of schedules that did not run as planned, by capped schedule label. */
export interface ScheduleMetrics {
  /** The schedule's label value (its id, or `_other` past the cap). */
  label(scheduleId: string): string;
  /** Counts `n` runs of the schedule with this outcome. */
  runs(scheduleId: string, outcome: ScheduleRunOutcome, n?: number): void;
}

/**
 * kairos_schedule_runs_total{schedule, outcome}: late (not SUCCEEDED within the schedule's SLA,
 * counted by the tracker), misfired (skipped by the misfire policy, the tracker) and skipped (by the
 * overlap policy or a pause, the delay tier). At most `limit` schedules are labelled.
 */
export function createScheduleMetrics(registry: Registry, limit = 100): ScheduleMetrics {
  const label = cappedLabel(limit);
  const counter = new Counter({
    name: 'kairos_schedule_runs_total',
    help: 'Runs of schedules that did not run as planned: late (past sla_ms), misfired, skipped (overlap, paused)',
    labelNames: ['schedule', 'outcome'] as const,
    registers: [registry],
  });
  return {
    label,
    runs(scheduleId, outcome, n = 1) {
      if (n > 0) counter.inc({ schedule: label(scheduleId), outcome }, n);
    },
  };
}
