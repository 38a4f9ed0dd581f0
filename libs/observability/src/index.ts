export { createLogger, silentLogger, type Logger, type LoggerConfig } from './logger.js';
export {
  createDelayTierMetrics,
  OTHER_TENANT,
  type DelayTierMetrics,
  type DelayTierMetricsOptions,
  type DispatchLagMetric,
  type Registry,
} from './metrics.js';
export { createTrackerMetrics, type TrackerMetrics } from './tracker-metrics.js';
export { createDeadRecordMetric, type DeadRecordMetric } from './dead-record-metrics.js';
export { createIngestMetrics, type IngestMetrics } from './ingest-metrics.js';
export { createCanaryMetrics, type CanaryMetrics } from './canary-metrics.js';
export { createWatchMetrics, type WatchMetrics, type WatchdogFinding } from './watch-metrics.js';
export { createHopMetrics, type Hop, type HopLagMetric } from './hop-metrics.js';
export { cappedLabel } from './capped-label.js';
export { createHttpMetrics, UNMATCHED_ROUTE, type HttpMetrics } from './http-metrics.js';
export {
  createScheduleMetrics,
  SCHEDULE_RUN_OUTCOMES,
  type ScheduleMetrics,
  type ScheduleRunOutcome,
} from './schedule-metrics.js';
export { startOtelExport, type OtelExport, type OtelExportConfig } from './otel-export.js';
