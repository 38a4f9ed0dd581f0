import { expect, test } from 'vitest';
import { KairosClient, type SentRequest } from '@kairos/client';
import { inTransaction } from '@kairos/db';
import { useNamespace } from '../support/namespace.js';
import { collectAnswers, startIngest } from '../support/ingest.js';
import { eventually } from '../support/pipeline.js';
import { startPostgresServer } from '../support/postgres-server.js';

const OUTAGE_MS = 20_000;
/** Requests per second, produced before, during and after the outage. */
const RATE = 40;

test('PostgreSQL stopped for 20 s during ingestion: no request lost, none rejected', async () => {
  const ns = await useNamespace('schedule-requests-pg-outage');
  // A private cluster: stopping the shared one would break every other test running now.
  const server = await startPostgresServer();
  ns.defer(() => server.destroy());
  const { ingest, pool, registry, fatal } = await startIngest(ns, {
    pgUrl: server.url,
    ingest: { maxBackoffMs: 2000 },
  });
  const answers = await collectAnswers(ns, registry);
  const client = new KairosClient({
    brokers: ns.services.kafkaBrokers.split(','),
    registryUrl: ns.services.registryUrl,
    topicPrefix: ns.prefix,
    tenant: 'acme',
  });
  ns.defer(() => client.close());
  await client.start();

  const sent: SentRequest[] = [];
  let producing = true;
  const produce = (async () => {
    for (let i = 0; producing; i++) {
      sent.push(
        await client.schedule({
          type: 'outage',
          resourceClass: 'default',
          payload: { i },
          delayMs: 3600_000,
          idempotencyKey: `outage-${i}`,
        }),
      );
      await new Promise((r) => setTimeout(r, 1000 / RATE));
    }
  })();

  await new Promise((r) => setTimeout(r, 5000));
  // A transaction holding its connection across the stop: the server ends that connection between
  // two queries, which must fail the transaction, not crash the process (an uncaught 'error').
  let signalStopped!: () => void;
  const stopped = new Promise<void>((r) => (signalStopped = r));
  const held = inTransaction(pool, async (tx) => {
    await tx.query('SELECT 1');
    await stopped;
    return tx.query('SELECT 1');
  }).then(
    () => 'committed',
    () => 'failed',
  );
  const stoppedAt = Date.now();
  await server.stop();
  signalStopped();
  expect(await held).toBe('failed');
  const sentAtStop = sent.length;
  await new Promise((r) => setTimeout(r, OUTAGE_MS - (Date.now() - stoppedAt)));
  const answeredDuringOutage = answers.outcomes.length;
  await server.start();
  const restartedAt = Date.now();
  const outageS = ((restartedAt - stoppedAt) / 1000).toFixed(1);
  // How long the backlog of the outage takes to be answered once PostgreSQL is back.
  const sentAtRestart = sent.length;
  const backlog = eventually(
    'the backlog answered',
    () => answers.outcomes.length >= sentAtRestart,
    120_000,
  ).then(() => ((Date.now() - restartedAt) / 1000).toFixed(1));
  await new Promise((r) => setTimeout(r, 5000));
  producing = false;
  await produce;

  await eventually(
    `all ${sent.length} requests answered`,
    () => answers.outcomes.length >= sent.length,
    120_000,
  );
  const backlogS = await backlog;
  await new Promise((r) => setTimeout(r, 2000));
  expect(answers.rejections).toEqual([]);
  expect(answers.outcomes).toHaveLength(sent.length);
  // Every request answered once, with its own job. (A transaction cut while committing may have
  // committed: its retry then answers `duplicate` with the same job, which is still one job.)
  const byRequest = new Map(answers.outcomes.map((o) => [o.request_id, o]));
  const jobIds = sent.map((s) => byRequest.get(s.requestId)?.job_id);
  expect(jobIds.every((id) => id !== undefined)).toBe(true);
  expect(new Set(jobIds).size).toBe(sent.length);
  const rows = await pool.query<{ id: string; key: string }>(
    `SELECT id, idempotency_key AS key FROM jobs WHERE type = 'outage'`,
  );
  expect(rows.rows).toHaveLength(sent.length);
  const jobOfKey = new Map(rows.rows.map((r) => [r.key, r.id]));
  for (const s of sent) expect(jobOfKey.get(s.idempotencyKey)).toBe(byRequest.get(s.requestId)?.job_id);
  // The ingest did wait the outage out (and answered nothing it had not stored).
  expect(ingest.stats().retries).toBeGreaterThan(0);
  expect(ingest.stats().rejected).toEqual({});
  expect(fatal).toEqual([]);
  console.log(
    `[pg-outage] ${sent.length} requests (${sentAtStop} before the stop); PostgreSQL down ${outageS} s, ` +
      `${answers.outcomes.length - answeredDuringOutage} answered after it came back; the ${sentAtRestart} sent until the ` +
      `restart were all answered ${backlogS} s after it; ` +
      `${ingest.stats().retries} transient failures retried`,
  );
}, 300_000);
