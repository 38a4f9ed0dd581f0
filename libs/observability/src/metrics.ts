import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { cappedLabel } from './capped-label.js';
import { createDeadRecordMetric, type DeadRecordMetric } from './dead-record-metrics.js';
import { createHopMetrics, LAG_BUCKETS, type HopLagMetric } from './hop-metrics.js';

export { OTHER_TENANT } from './capped-label.js';
import { createScheduleMetrics, type ScheduleMetrics } from './schedule-metrics.js';

export type { Registry };

export interface DelayTierMetricsOptions {
  /** Registry to register into. Default: a new Registry with prom-client's default process metrics. */
  readonly registry?: Registry;
  /** Distinct tenants labelled on dispatch lag before new ones become `_other`. Default: 100. */
  readonly tenantLabelLimit?: number;
  /** Distinct schedules labelled on kairos_schedule_runs_total before new ones become `_other`. Default: 100. */
  readonly scheduleLabelLimit?: number;
}

/** Dispatch lag (dispatch time minus due time) by resource class and capped tenant. */
export interface DispatchLagMetric {
  observe(resourceClass: string, tenant: string, seconds: number): void;
}

export interface DelayTierMetrics {
  readonly registry: Registry;
  /** Content-Type of `text()`, for the /metrics response. */
  readonly contentType: string;
  readonly dispatchLag: DispatchLagMetric;
  /** Per-hop lag of the hops the delay tier sees (outbox → Kafka, Kafka → hot set, due → dispatch). */
  readonly hops: HopLagMetric;
  readonly hotSetSize: Gauge<'partition'>;
  readonly oldestDueAge: Gauge<'partition'>;
  readonly hydrated: Counter<'partition'>;
  readonly epochChanges: Counter<'partition'>;
  /** 1 while the partition runs PostgreSQL-only (no hot set), else 0. */
  readonly fallback: Gauge<'partition'>;
  readonly lookahead: Gauge;
  readonly dispatched: Counter<'resource_class'>;
  readonly expired: Counter;
  /** Jobs held back by a resource class's rate limit. */
  readonly rateLimited: Counter<'resource_class'>;
  /** Runs of schedules skipped by their overlap policy or a pause. */
  readonly schedules: ScheduleMetrics;
  /** Job events set aside as unappliable (kairos_dead_records_total). */
  readonly deadRecords: DeadRecordMetric;
  /** Drops every series of a partition (call when the partition is revoked). */
  forgetPartition(partition: number): void;
  /** The registry in Prometheus text format. */
  text(): Promise<string>;
}

export function createDelayTierMetrics(options: DelayTierMetricsOptions = {}): DelayTierMetrics {
  const tenantLabel = cappedLabel(options.tenantLabelLimit ?? 100, undefined, 'tenantLabelLimit');
  let registry = options.registry;
  if (!registry) {
    registry = new Registry();
    // Only into a registry we own: a caller's registry may already hold them (duplicates throw).
    collectDefaultMetrics({ register: registry });
  }
  const registers = [registry];

  const lag = new Histogram({
    name: 'kairos_dispatch_lag_seconds',
    help: 'Seconds from a job being due to its dispatch',
    labelNames: ['resource_class', 'tenant'] as const,
    buckets: LAG_BUCKETS,
    registers,
  });

  const byPartition = { labelNames: ['partition'] as const, registers };
  const hotSetSize = new Gauge({
    name: 'kairos_hot_set_jobs',
    help: 'Jobs in the Redis hot set of a partition',
    ...byPartition,
  });
  const oldestDueAge = new Gauge({
    name: 'kairos_hot_set_oldest_due_age_seconds',
    help: 'How long the oldest due job in the hot set has been due (0 when none is due)',
    ...byPartition,
  });
  const hydrated = new Counter({
    name: 'kairos_hydrated_jobs_total',
    help: 'Jobs loaded into the hot set from PostgreSQL',
    ...byPartition,
  });
  const epochChanges = new Counter({
    name: 'kairos_partition_epoch_changes_total',
    help: 'Ownership epochs taken for a partition by this instance',
    ...byPartition,
  });
  const fallback = new Gauge({
    name: 'kairos_pg_fallback_active',
    help: '1 while the partition is served from PostgreSQL only (Redis unusable), else 0',
    ...byPartition,
  });
  const partitionMetrics = [hotSetSize, oldestDueAge, hydrated, epochChanges, fallback];

  const lookahead = new Gauge({
    name: 'kairos_lookahead_window_seconds',
    help: 'Effective lookahead window of the hot sets',
    registers,
  });
  const dispatched = new Counter({
    name: 'kairos_dispatched_total',
    help: 'Jobs dispatched to their task topic',
    labelNames: ['resource_class'] as const,
    registers,
  });
  const expired = new Counter({
    name: 'kairos_expired_total',
    help: 'Jobs expired because their deadline passed before dispatch',
    registers,
  });
  const rateLimited = new Counter({
    name: 'kairos_rate_limited_total',
    help: 'Jobs held back by a resource class rate limit',
    labelNames: ['resource_class'] as const,
    registers,
  });

  const owned = registry;
  return {
    registry: owned,
    get contentType() {
      return owned.contentType;
    },
    dispatchLag: {
      observe(resourceClass, tenant, seconds) {
        // prom-client throws on NaN/Infinity; a bad clock reading must not fail a dispatch.
        if (!Number.isFinite(seconds)) return;
        lag.observe({ resource_class: resourceClass, tenant: tenantLabel(tenant) }, seconds);
      },
    },
    hops: createHopMetrics(owned, tenantLabel),
    hotSetSize,
    oldestDueAge,
    hydrated,
    epochChanges,
    fallback,
    lookahead,
    dispatched,
    expired,
    rateLimited,
    schedules: createScheduleMetrics(owned, options.scheduleLabelLimit),
    deadRecords: createDeadRecordMetric(owned),
    forgetPartition(partition) {
      for (const metric of partitionMetrics) metric.remove({ partition });
    },
    text: () => owned.metrics(),
  };
}
