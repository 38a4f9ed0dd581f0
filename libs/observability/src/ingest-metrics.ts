import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface IngestMetrics {
  readonly registry: Registry;
  readonly contentType: string;
  /** Requests answered, by command and result (accepted, duplicate, rejected). */
  readonly requests: Counter<'command' | 'result'>;
  /** Rejected requests by reason code. */
  readonly rejections: Counter<'reason'>;
  /** Transient failures waited out, by batch step (decode, apply, publish). */
  readonly transientFailures: Counter<'step'>;
  /** Time to decode, apply and answer one batch. */
  readonly batchSeconds: Histogram;
  /** From a request's Kafka timestamp to its answer being committed. */
  readonly requestAgeSeconds: Histogram;
  text(): Promise<string>;
}

/** The ingest's Prometheus metrics, in a new registry with the default process metrics. */
export function createIngestMetrics(): IngestMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'kairos_ingest_requests_total',
    help: 'schedule-requests answered, by command and result (accepted, duplicate, rejected)',
    labelNames: ['command', 'result'] as const,
    registers: [registry],
  });
  const rejections = new Counter({
    name: 'kairos_ingest_rejections_total',
    help: 'schedule-requests rejected, by reason code',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const transientFailures = new Counter({
    name: 'kairos_ingest_transient_failures_total',
    help: 'Transient failures waited out (PostgreSQL, the registry or a Kafka transaction), by batch step',
    labelNames: ['step'] as const,
    registers: [registry],
  });
  const batchSeconds = new Histogram({
    name: 'kairos_ingest_batch_seconds',
    help: 'Time to decode, apply and answer one batch of schedule-requests',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const requestAgeSeconds = new Histogram({
    // A backlog or an outage shows here first: requests wait in the topic, none are lost.
    name: 'kairos_ingest_request_age_seconds',
    help: "From a request's Kafka timestamp to its answer being committed",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  return {
    registry,
    contentType: registry.contentType,
    requests,
    rejections,
    transientFailures,
    batchSeconds,
    requestAgeSeconds,
    text: () => registry.metrics(),
  };
}
