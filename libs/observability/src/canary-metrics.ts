import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface CanaryMetrics {
  /** Unix time of the newest successful canary, per class (0: none seen yet). */
  readonly lastSuccess: Gauge<'resource_class'>;
  /** Creation → SUCCEEDED of each canary, per class. */
  readonly latency: Histogram<'resource_class'>;
  readonly created: Counter<'resource_class'>;
  /** 1 while an alert holds (`alert`, and its labels: `resource_class` or `schedule`), else 0. */
  readonly alertActive: Gauge<'alert' | 'resource_class' | 'schedule'>;
}

/** The canary's metrics, registered in `registry` (the tracker's). */
export function createCanaryMetrics(registry: Registry): CanaryMetrics {
  return {
    lastSuccess: new Gauge({
      name: 'kairos_canary_last_success_timestamp_seconds',
      help: 'Unix time of the newest canary that succeeded, per resource class',
      labelNames: ['resource_class'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'kairos_canary_latency_seconds',
      help: 'End-to-end time of a canary, created to SUCCEEDED recorded, per resource class',
      labelNames: ['resource_class'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    created: new Counter({
      name: 'kairos_canaries_created_total',
      help: 'Canaries created, per resource class (one per class and period, whichever tracker made it)',
      labelNames: ['resource_class'] as const,
      registers: [registry],
    }),
    alertActive: new Gauge({
      name: 'kairos_alert_active',
      help: 'Alerts Kairos raises itself: 1 while one holds (canary_stalled per resource class, schedule_sla_missed per schedule)',
      labelNames: ['alert', 'resource_class', 'schedule'] as const,
      registers: [registry],
    }),
  };
}
