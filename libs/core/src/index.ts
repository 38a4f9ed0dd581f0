export * from './murmur2.js';
export * from './errors.js';
export * from './access.js';
export * from './auth.js';
export * from './key-requests.js';
export * from './error-classes.js';
export * from './job.js';
export * from './job-states.js';
export * from './limits.js';
export * from './create-job.js';
export * from './reschedule.js';
export * from './retry.js';
export * from './breaker.js';
export * from './schedule/policy.js';
export { compileCron, type CompiledCron, type CronCheck } from './schedule/cron.js';
export { checkTimeZone, type ZoneCheck } from './schedule/zone.js';
export {
  comparePositions,
  fireTimesBetween,
  nextFireTimes,
  occurrencesAfter,
  type Cursor,
  type Instant,
  type Occurrence,
  type OccurrenceKind,
  type OccurrencePosition,
} from './schedule/occurrences.js';
export { OCCURRENCE_NAMESPACE, occurrenceId, uuidV5 } from './schedule/identity.js';
export * from './schedule/jitter.js';
export * from './schedule/misfire.js';
export * from './schedule/preview.js';
export * from './schedule/spec.js';
export * from './schedule/runs.js';
export * from './schedule/health.js';
export * from './idle-backoff.js';
export * from './poll-loop.js';
export * from './lifecycle.js';
export * from './group-commit.js';
export * from './isolate-faults.js';
export * from './tls-options.js';
export * from './job-search.js';
export * from './zod-errors.js';
export * from './storable.js';
export * from './canary.js';
export * from './trace-context.js';
export * from './hop-spans.js';
export * from './lag-history.js';
export * from './overview.js';
export * from './routing.js';
