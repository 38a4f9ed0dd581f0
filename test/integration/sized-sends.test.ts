import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';

/**
 * A send larger than the broker's record-batch limit (message.max.bytes, 1 MiB by default): KafkaJS
 * puts one partition's messages into one batch, which the broker refuses whole, on every retry
 * (a delay tier owning 32 partitions popped such a round in a 20,000-job herd and stopped
 * dispatching). Every Kairos producer splits it.
 */
test('a 3 MB send to one partition is acknowledged whole, every message in order', async () => {
  const ns = await useNamespace('sized-sends');
  const topic = `${ns.prefix}sized`;
  const admin = ns.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producer = ns.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const n = 3000;
  const acked = await producer.sendBatch({
    acks: -1,
    topicMessages: [
      {
        topic,
        messages: Array.from({ length: n }, (_, i) => ({
          key: String(i),
          value: Buffer.alloc(1000, i % 256),
        })),
      },
    ],
  });
  expect(acked.every((a) => a.errorCode === 0)).toBe(true);
  const [offsets] = await admin.fetchTopicOffsets(topic);
  expect(Number(offsets?.high)).toBe(n);
  const consumer = ns.consumer();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const keys: string[] = [];
  await new Promise<void>((done) => {
    void consumer.run({
      eachMessage: ({ message }) => {
        keys.push(message.key?.toString() ?? '');
        if (keys.length === n) done();
        return Promise.resolve();
      },
    });
  });
  await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  expect(keys).toEqual(Array.from({ length: n }, (_, i) => String(i)));
});
