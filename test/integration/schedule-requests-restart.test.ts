import { expect, test } from 'vitest';
import { KairosClient } from '@kairos/client';
import { useNamespace } from '../support/namespace.js';
import { collectAnswers, startIngest } from '../support/ingest.js';
import { eventually } from '../support/pipeline.js';

const REQUESTS = 3000;

test('the ingest replaced mid-stream: every request answered exactly once, one job each', async () => {
  const ns = await useNamespace('schedule-requests-restart');
  const first = await startIngest(ns, { ingest: { instanceId: 'first' } });
  const answers = await collectAnswers(ns, first.registry);
  const client = new KairosClient({
    brokers: ns.services.kafkaBrokers.split(','),
    registryUrl: ns.services.registryUrl,
    topicPrefix: ns.prefix,
    tenant: 'acme',
  });
  ns.defer(() => client.close());
  await client.start();
  // Paced, so the stream is still flowing when the first instance stops.
  const sending = (async () => {
    const sent = [];
    for (let i = 0; i < REQUESTS; i += 100) {
      sent.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, (_, j) =>
            client.schedule({
              type: 'restart',
              resourceClass: 'io',
              delayMs: 3600_000,
              idempotencyKey: `r-${i + j}`,
            }),
          ),
        )),
      );
      await new Promise((r) => setTimeout(r, 150));
    }
    return sent;
  })();
  await eventually('a third answered', () => answers.outcomes.length >= REQUESTS / 3, 120_000);
  // Stopped in the middle of the stream (a batch may be cut between its PostgreSQL and Kafka
  // commits), then a new instance takes over the group.
  await first.ingest.stop();
  const answeredByFirst = answers.outcomes.length;
  const sentByThen = await Promise.race([sending.then(() => REQUESTS), Promise.resolve(-1)]);
  expect(sentByThen, 'the stream was still flowing when the first instance stopped').toBe(-1);
  const second = await startIngest(ns, { ingest: { instanceId: 'second' } });
  const sent = await sending;
  await eventually(`${REQUESTS} answered`, () => answers.outcomes.length >= REQUESTS, 120_000);
  await new Promise((r) => setTimeout(r, 2000));

  expect(answers.rejections).toEqual([]);
  expect(answers.outcomes).toHaveLength(REQUESTS);
  const byRequest = new Map(answers.outcomes.map((o) => [o.request_id, o]));
  expect(sent.every((s) => byRequest.has(s.requestId))).toBe(true);
  const rows = await second.pool.query<{ id: string; key: string }>(
    `SELECT id, idempotency_key AS key FROM jobs WHERE type = 'restart'`,
  );
  expect(rows.rows).toHaveLength(REQUESTS);
  const jobOfKey = new Map(rows.rows.map((r) => [r.key, r.id]));
  for (const s of sent) expect(byRequest.get(s.requestId)?.job_id).toBe(jobOfKey.get(s.idempotencyKey));
  expect([...first.fatal, ...second.fatal]).toEqual([]);
  const duplicates = answers.outcomes.filter((o) => o.duplicate).length;
  console.log(
    `[restart] ${REQUESTS} requests: ${answeredByFirst} answered by the first instance, the rest by the second; ` +
      `${duplicates} answered as duplicates (applied by the first, answered by the second)`,
  );
}, 300_000);
