import { registerErrorRecogniser } from '@kairos/core';
import { recognisePgError } from './pg-errors.js';

export { createPool, inTransaction, type PoolOptions, type Pool, type PoolClient } from './pool.js';
export { migrate, loadMigrations, ensureJobPartitions, type Migration } from './migrate.js';
export * from './jobs.js';
export * from './job-inserts.js';
export * from './tracking.js';
export type { Refusals, RefusalReason } from './refused-reports.js';
export * from './epochs.js';
export * from './dispatch.js';
export * from './request-ledger.js';
export * from './api-keys.js';
export * from './schedules.js';
export * from './schedule-occurrences.js';
export * from './schedule-runs.js';
export { publishOutboxAfterCommit, type OutboxPublisher } from './outbox-relay.js';
export { sweepOutboxSoon } from './outbox-sweeper.js';

// Loading this package teaches classifyError PostgreSQL's errors.
registerErrorRecogniser(recognisePgError);
export * from './job-search.js';
export * from './replays.js';
export * from './canaries.js';
export * from './job-gauges.js';
export * from './watchdog.js';
export * from './schedule-health.js';
export * from './dispatch-lag.js';
