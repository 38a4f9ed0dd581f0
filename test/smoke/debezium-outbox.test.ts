import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { migrate } from '@kairos/db';
import { ensureTopics, headerString } from '@kairos/kafka';
import { registerOutboxConnector } from '../support/debezium.js';
import { useNamespace } from '../support/namespace.js';

test('an outbox row reaches its routed topic through Debezium with key, value and headers', async () => {
  const ns = await useNamespace('outbox');
  const pool = ns.pgPool(2);
  // The real schema, so the test exercises the outbox table the command handlers write to.
  await migrate(pool);
  const topic = `${ns.prefix}kairos.smoke-events`;
  await ensureTopics(ns.kafka, [{ name: topic, partitions: 2, configs: {}, purpose: 'smoke test' }]);

  // The production connector config from connectors/, re-pointed at this test's schema.
  await registerOutboxConnector(ns);

  const consumer = ns.consumer();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = new Promise<{ key: string; value: Buffer; headers: Record<string, string | undefined> }>(
    (done, fail) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            done({
              key: message.key?.toString() ?? '',
              value: message.value!,
              headers: {
                id: headerString(message.headers, 'id'),
                type: headerString(message.headers, 'kairos-event-type'),
                tenant: headerString(message.headers, 'kairos-tenant'),
                jobId: headerString(message.headers, 'kairos-job-id'),
                dueAt: headerString(message.headers, 'kairos-due-at'),
              },
            });
            return Promise.resolve();
          },
        })
        .catch(fail);
    },
  );

  // Insert and delete in one transaction, as the command handlers do: the WAL still has the insert.
  const id = randomUUID();
  const payload = Buffer.from([0, 0, 0, 0, 7, 1, 2, 3, 255]);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload, job_id, tenant_id, due_at)
       VALUES ($1, 'smoke-events', 'job-42', 'JobCreated', $2, 'job-42', 'acme', '1767225600000')`,
      [id, payload],
    );
    await client.query('DELETE FROM outbox WHERE id = $1', [id]);
    await client.query('COMMIT');
  } finally {
    client.release();
  }

  const msg = await received;
  await consumer.disconnect();
  await pool.end();
  expect(msg.key).toBe('job-42');
  expect(msg.value.equals(payload)).toBe(true); // bytes passed through unchanged
  expect(msg.headers).toEqual({
    id,
    type: 'JobCreated',
    tenant: 'acme',
    jobId: 'job-42',
    dueAt: '1767225600000',
  });
});
