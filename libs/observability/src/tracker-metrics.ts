import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { createCanaryMetrics, type CanaryMetrics } from './canary-metrics.js';
import { cappedLabel } from './capped-label.js';
import { createDeadRecordMetric, type DeadRecordMetric } from './dead-record-metrics.js';
import { createHopMetrics, type HopLagMetric } from './hop-metrics.js';
import { createWatchMetrics, type WatchMetrics } from './watch-metrics.js';
import { createScheduleMetrics, type ScheduleMetrics } from './schedule-metrics.js';

export interface TrackerMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** Results of superseded attempts (zombie workers): recorded, changed nothing. */
  readonly zombieWritesSuppressed: Counter;
  /** Reports refused by PostgreSQL's verdict (refused_reports): they changed nothing. */
  readonly refusedReports: Counter<'kind' | 'reason'>;
  readonly results: Counter<'outcome'>;
  readonly retriesScheduled: Counter;
  readonly deadLettered: Counter<'resource_class'>;
  /** Result records set aside as unappliable (kairos_dead_records_total). */
  readonly deadRecords: DeadRecordMetric;
  /** The canary's, when the tracker runs it (registered either way: an absent series is not a 0). */
  readonly canary: CanaryMetrics;
  /** The watchdog's findings and repairs, and the gauges of jobs by state, overdue, forecast and lag. */
  readonly watch: WatchMetrics;
  /** Per-hop lag of the hops the tracker sees (dispatch → start, start → finish, finish → recorded). */
  readonly hops: HopLagMetric;
  /** Late and misfired runs of schedules (kairos_schedule_runs_total). */
  readonly schedules: ScheduleMetrics;
  text(): Promise<string>;
}

/**
 * The tracker's Prometheus metrics, in a new registry with the default process metrics; at most
 * `scheduleLabelLimit` schedules (default 100) get their own label values.
 */
export function createTrackerMetrics(scheduleLabelLimit = 100): TrackerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const zombieWritesSuppressed = new Counter({
    // Was zombie_writes_suppressed_total (the runbook's name) until the kairos_ prefix was made
    // general; a surge means workers stall past their leases (GC, memory).
    name: 'kairos_zombie_writes_suppressed_total',
    help: 'Results of superseded attempts (zombie workers) that changed nothing',
    registers: [registry],
  });
  const refusedReports = new Counter({
    // Labels are a fixed set (kind: start | result; reason: refused-reports.ts in libs/db).
    name: 'kairos_tracker_refused_reports_total',
    help: 'Worker reports the tracker refused (unknown job, fence ahead, finished attempt, terminal job)',
    labelNames: ['kind', 'reason'] as const,
    registers: [registry],
  });
  const results = new Counter({
    name: 'kairos_task_results_total',
    help: 'Attempt results applied to a job, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const retriesScheduled = new Counter({
    name: 'kairos_retries_scheduled_total',
    help: 'Failed attempts whose job was scheduled again',
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'kairos_dead_lettered_total',
    help: 'Jobs failed for good and written to their dead-letter topic',
    labelNames: ['resource_class'] as const,
    registers: [registry],
  });
  return {
    registry,
    contentType: registry.contentType,
    zombieWritesSuppressed,
    refusedReports,
    results,
    retriesScheduled,
    deadLettered,
    deadRecords: createDeadRecordMetric(registry),
    canary: createCanaryMetrics(registry),
    watch: createWatchMetrics(registry),
    hops: createHopMetrics(registry, cappedLabel(100)),
    schedules: createScheduleMetrics(registry, scheduleLabelLimit),
    text: () => registry.metrics(),
  };
}
