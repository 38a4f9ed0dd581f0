import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { expect, test } from 'vitest';
import { shardOf } from '@kairos/core';
import { inTransaction, migrate, publishOutboxAfterCommit, writeOutbox, type OutboxRow } from '@kairos/db';
import { ensureTopics, HEADERS, startOutboxRelay, topicCatalogue, topicNames } from '@kairos/kafka';
import { registerOutboxConnector } from '../support/debezium.js';
import { useNamespace } from '../support/namespace.js';

const PARTITIONS = 8;

function row(jobId: string, traceparent: string | null): OutboxRow {
  return {
    id: randomUUID(),
    aggregateType: 'job-events',
    aggregateId: jobId,
    type: 'JobScheduled',
    payload: Buffer.from([0, 0, 0, 0, 9, ...Buffer.from(jobId)]),
    jobId,
    tenantId: 'acme',
    dueAt: new Date(1_767_225_600_000),
    traceparent,
  };
}

/** What a consumer can tell of a job event, Debezium's own context headers left out. */
function seen(m: KafkaMessage, partition: number) {
  const headers = Object.fromEntries(
    Object.entries(m.headers ?? {})
      .filter(([k]) => !k.startsWith('__debezium') && k !== HEADERS.relay)
      // Debezium writes a NULL column as a header without a value; the relay leaves it out.
      .flatMap(([k, v]) => (v === null || v === undefined ? [] : [[k, v.toString()]])),
  );
  return { partition, key: m.key?.toString(), value: m.value?.toString('hex'), headers };
}

test('committed job events reach Kafka twice, from the relay and from Debezium, alike; rolled back ones never', async () => {
  const ns = await useNamespace('relay');
  const pool = ns.pgPool(2);
  await migrate(pool);
  const topics = topicNames(ns.prefix);
  await ensureTopics(
    ns.kafka,
    topicCatalogue({ prefix: ns.prefix, jobEventPartitions: PARTITIONS }).filter(
      (t) => t.name === topics.jobEvents,
    ),
  );
  await registerOutboxConnector(ns);
  const relay = await startOutboxRelay(ns.kafka, topics, {
    outboxRelay: true,
    jobEventPartitions: PARTITIONS,
  });
  ns.defer(async () => {
    publishOutboxAfterCommit(pool, undefined);
    await relay?.stop();
    await pool.end();
  });
  publishOutboxAfterCommit(pool, relay);

  const rolledBack = row('job-rolled-back', null);
  await expect(
    inTransaction(pool, async (tx) => {
      await writeOutbox(tx, [rolledBack]);
      throw new Error('changed its mind');
    }),
  ).rejects.toThrow('changed its mind');
  const committed = [
    row('job-a', null),
    row('job-b', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
  ];
  await inTransaction(pool, (tx) => writeOutbox(tx, committed));

  const consumer = ns.consumer();
  await consumer.connect();
  await consumer.subscribe({ topic: topics.jobEvents, fromBeginning: true });
  const got: { relayed: boolean; view: ReturnType<typeof seen> }[] = [];
  await new Promise<void>((done, fail) => {
    consumer
      .run({
        eachMessage: ({ partition, message }) => {
          got.push({
            relayed: message.headers?.[HEADERS.relay] !== undefined,
            view: seen(message, partition),
          });
          if (got.length === 2 * committed.length) done();
          return Promise.resolve();
        },
      })
      .catch(fail);
  });
  await consumer.disconnect();

  for (const r of committed) {
    const copies = got.filter((g) => g.view.key === r.aggregateId);
    expect(copies.map((c) => c.relayed).sort()).toEqual([false, true]);
    // Same partition (the job's shard), key, bytes and headers: a consumer cannot tell them apart.
    expect(copies[0]?.view).toEqual(copies[1]?.view);
    expect(copies[0]?.view.partition).toBe(shardOf(r.aggregateId, PARTITIONS));
    expect(copies[0]?.view.headers).toMatchObject({
      id: r.id,
      [HEADERS.jobId]: r.jobId,
      [HEADERS.dueAt]: '1767225600000',
      ...(r.traceparent === null ? {} : { [HEADERS.traceparent]: r.traceparent }),
    });
  }
  expect(got.some((g) => g.view.key === rolledBack.aggregateId)).toBe(false);
});
