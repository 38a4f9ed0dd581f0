export * from './topics.js';
export * from './headers.js';
export * from './client.js';
export * from './admin.js';
export * from './avro.js';
export * from './handoff-consumer.js';
export * from './outbox-relay.js';
