import type { RecordMetadata } from 'kafkajs';
import { expect, test } from 'vitest';
import { notingPartitioner, unacknowledged } from '../src/complete-sends.js';

const acked = (topicName: string, partition: number, errorCode = 0): RecordMetadata => ({
  topicName,
  partition,
  errorCode,
});

test('messages whose partition no acknowledgement covers are the unsent ones, pinned to that partition', () => {
  const batch = [
    {
      topic: 'tasks',
      messages: [
        { key: 'a', value: '1', partition: 0 },
        { key: 'b', value: '2', partition: 2 },
        { key: 'c', value: '3', partition: 2 },
      ],
    },
    { topic: 'results', messages: [{ key: 'd', value: '4', partition: 1 }] },
  ];
  expect(unacknowledged(batch, [acked('tasks', 0), acked('results', 1)])).toEqual([
    {
      topic: 'tasks',
      messages: [
        { key: 'b', value: '2', partition: 2 },
        { key: 'c', value: '3', partition: 2 },
      ],
    },
  ]);
  expect(unacknowledged(batch, [acked('tasks', 0), acked('tasks', 2), acked('results', 1)])).toEqual([]);
  // An acknowledgement of another topic's partition 2 covers nothing here; an error is no acknowledgement.
  expect(unacknowledged(batch, [acked('tasks', 0), acked('results', 2), acked('tasks', 2, 6)])).toHaveLength(
    2,
  );
});

test('the noting partitioner remembers what KafkaJS chose for a keyed message', () => {
  const partitionMetadata = [0, 1, 2, 3].map((partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
  }));
  const partitioner = notingPartitioner()();
  const message = { key: 'job-42', value: 'x' };
  const partition = partitioner({ topic: 'tasks', partitionMetadata, message });
  expect(unacknowledged([{ topic: 'tasks', messages: [message] }], [acked('tasks', partition)])).toEqual([]);
  expect(unacknowledged([{ topic: 'tasks', messages: [message] }], [])).toEqual([
    { topic: 'tasks', messages: [{ ...message, partition }] },
  ]);
});
