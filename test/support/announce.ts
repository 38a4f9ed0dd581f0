import { hostname } from 'node:os';
import {
  announceWorker,
  forgetWorkers,
  groupKey,
  instanceKey,
  type AvroCodec,
  type TopicNames,
} from '@kairos/kafka';
import type { Kafka } from 'kafkajs';
import type { Namespace } from './namespace.js';

/**
 * Says on kairos.workers that a worker without a service name handles `jobTypes` on `classes`,
 * live for an hour: for tests that count the delay tier's task messages on the class topics
 * without running a worker (a type no live worker handles goes to the class's waiting topic).
 * Its keys are tombstoned on the namespace's cleanup.
 */
export async function announceClassWorker(
  ns: Namespace,
  p: { readonly kafka: Kafka; readonly codec: AvroCodec; readonly topics: TopicNames },
  classes: readonly string[],
  jobTypes: readonly string[],
): Promise<void> {
  const groupId = `${ns.prefix}announced`;
  const workerId = `announced-${process.pid}`;
  const producer = p.kafka.producer();
  await producer.connect();
  ns.defer(async () => {
    await forgetWorkers(producer, p.topics.workers, [instanceKey(groupId, workerId), groupKey(groupId)]);
    await producer.disconnect();
  });
  const now = Date.now();
  await announceWorker(producer, p.codec, p.topics.workers, {
    service: groupId,
    group_id: groupId,
    worker_id: workerId,
    host: hostname(),
    pid: process.pid,
    resource_classes: [...classes],
    job_types: [...jobTypes],
    started_at: now,
    sent_at: now,
    interval_ms: 20 * 60_000,
    service_topics: false,
  });
}
