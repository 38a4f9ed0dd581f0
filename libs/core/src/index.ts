export * from './murmur2.js';
export * from './errors.js';
export * from './job.js';
export * from './limits.js';
export * from './create-job.js';
