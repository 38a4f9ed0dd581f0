export * from './murmur2.js';
export * from './errors.js';
export * from './job.js';
export * from './limits.js';
export * from './create-job.js';
export * from './reschedule.js';
export * from './retry.js';
export * from './breaker.js';
