export { createPool, inTransaction, type PoolOptions, type Pool, type PoolClient } from './pool.js';
export { migrate, loadMigrations, ensureJobPartitions, type Migration } from './migrate.js';
export * from './jobs.js';
export * from './tracking.js';
export * from './epochs.js';
export * from './dispatch.js';
export * from './request-ledger.js';
export * from './schedules.js';
