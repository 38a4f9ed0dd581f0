import { registerErrorRecogniser } from '@kairos/core';
import { recogniseKafkaError } from './kafka-errors.js';

export * from './topics.js';
export * from './headers.js';
export * from './client.js';
export * from './admin.js';
export * from './groups.js';
export * from './group-seeding.js';
export * from './tail.js';
export * from './worker-registry.js';
export * from './service-topics.js';
export * from './avro.js';
export * from './record-decoder.js';
export * from './record-checks.js';
export * from './dead-records.js';
export * from './source-record.js';
export * from './registry.js';
export * from './security.js';
export * from './handoff-consumer.js';
export * from './outbox-relay.js';
export { isTransientRegistryError } from './kafka-errors.js';
export { isSequenceDesync, RenewingProducer } from './renewing-producer.js';
export { KafkaUnsentMessagesError } from './complete-sends.js';

// Loading this package teaches classifyError KafkaJS's and the registry client's errors.
registerErrorRecogniser(recogniseKafkaError);
export { fetchTopicOffsetsSettled } from './offsets.js';
