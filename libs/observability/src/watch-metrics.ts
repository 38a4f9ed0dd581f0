import { Counter, Gauge, type Registry } from 'prom-client';

/** What the reconciliation watchdog finds: work that would otherwise be silently stuck. */
export type WatchdogFinding =
  'lost_scheduled' | 'stuck_queued' | 'running_without_lease' | 'outbox_stalled' | 'schedule_not_generated';

/** The tracker's watchdog counters and its gauges of the jobs' state. */
export interface WatchMetrics {
  readonly findings: Counter<'kind'>;
  readonly repairs: Counter<'kind'>;
  /** Live jobs (SCHEDULED, QUEUED, RUNNING) by state and class. */
  readonly jobs: Gauge<'state' | 'resource_class'>;
  /** FAILED (dead-lettered) jobs held in PostgreSQL, by class. */
  readonly deadLetters: Gauge<'resource_class'>;
  readonly oldestOverdue: Gauge<'resource_class'>;
  /** SCHEDULED jobs due within each window (1m, 5m, 15m, 1h), by class: the load forecast. */
  readonly jobsDue: Gauge<'resource_class' | 'window'>;
  /** Outbox commit → published to Kafka, from the newest outbox heartbeat seen (read at scrape). */
  readonly outboxLag: Gauge;
  /** Where the outbox lag is read from at each scrape, ms (undefined: unknown, shown as NaN). */
  outboxLagFrom(source: () => number | undefined): void;
  readonly consumerLag: Gauge<'group' | 'topic'>;
}

export function createWatchMetrics(registry: Registry): WatchMetrics {
  const registers = [registry];
  let lagSource: (() => number | undefined) | undefined;
  const outboxLag = new Gauge({
    name: 'kairos_outbox_lag_seconds',
    help: 'Outbox publication lag: age of the newest outbox heartbeat seen in Kafka when read',
    registers,
    collect() {
      const ms = lagSource?.();
      // Unknown (no heartbeat followed): NaN, which no threshold matches, rather than a reassuring 0.
      this.set(ms === undefined ? NaN : ms / 1000);
    },
  });
  return {
    outboxLag,
    outboxLagFrom(source) {
      lagSource = source;
    },
    findings: new Counter({
      name: 'kairos_watchdog_findings_total',
      help: 'Stuck or lost work the reconciliation watchdog found, by kind',
      labelNames: ['kind'] as const,
      registers,
    }),
    repairs: new Counter({
      name: 'kairos_watchdog_repairs_total',
      help: 'Repairs the reconciliation watchdog made (jobs re-entered, lost attempts failed, schedules nudged), by kind',
      labelNames: ['kind'] as const,
      registers,
    }),
    jobs: new Gauge({
      name: 'kairos_jobs',
      help: 'Jobs in a live state (SCHEDULED, QUEUED, RUNNING), by state and resource class',
      labelNames: ['state', 'resource_class'] as const,
      registers,
    }),
    deadLetters: new Gauge({
      name: 'kairos_dead_letters',
      help: 'Dead-lettered (FAILED) jobs held in PostgreSQL, by resource class',
      labelNames: ['resource_class'] as const,
      registers,
    }),
    oldestOverdue: new Gauge({
      name: 'kairos_oldest_overdue_seconds',
      help: 'How long the oldest SCHEDULED job of a resource class has been due (0 when none is)',
      labelNames: ['resource_class'] as const,
      registers,
    }),
    jobsDue: new Gauge({
      name: 'kairos_jobs_due',
      help: 'SCHEDULED jobs due within the window from now, by resource class: the load forecast',
      labelNames: ['resource_class', 'window'] as const,
      registers,
    }),
    consumerLag: new Gauge({
      name: 'kairos_consumer_lag_messages',
      help: 'Records not yet consumed by a Kairos consumer group, per topic',
      labelNames: ['group', 'topic'] as const,
      registers,
    }),
  };
}
