import { Histogram, type Registry } from 'prom-client';

// 1 ms .. 60 s: sub-ms is noise next to Kafka produce latency; past a minute only "late" matters.
export const LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The hops of a job's way, each measured by the component that sees its end: the delay tier
 * (outbox → Kafka, Kafka → hot set, due → dispatch) and the tracker (dispatch → start,
 * start → finish, finish → recorded).
 */
export type Hop =
  | 'outbox_to_kafka'
  | 'kafka_to_hot_set'
  | 'due_to_dispatch'
  | 'dispatch_to_start'
  | 'start_to_finish'
  | 'finish_to_recorded';

export interface HopLagMetric {
  observe(hop: Hop, resourceClass: string, tenant: string, seconds: number): void;
}

/** `kairos_hop_lag_seconds{hop, resource_class, tenant}` in `registry`, the tenant label capped by `tenantLabel`. */
export function createHopMetrics(registry: Registry, tenantLabel: (tenant: string) => string): HopLagMetric {
  const hist = new Histogram({
    name: 'kairos_hop_lag_seconds',
    help: 'Seconds a job spent on each hop of its way (outbox to Kafka ... finish to recorded)',
    labelNames: ['hop', 'resource_class', 'tenant'] as const,
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  return {
    observe(hop, resourceClass, tenant, seconds) {
      // Clocks of different hosts may disagree by a little: a negative hop is clock skew, shown as 0.
      if (!Number.isFinite(seconds)) return;
      hist.observe({ hop, resource_class: resourceClass, tenant: tenantLabel(tenant) }, Math.max(0, seconds));
    },
  };
}
