import { readFileSync } from 'node:fs';
import { KairosClient } from '@kairos/client';
import { ensureTopics, topicCatalogue } from '@kairos/kafka';
import { unsecuredOAuthToken } from '@kairos/ops';
import { Worker } from '@kairos/worker-sdk';
import { expect, inject, test } from 'vitest';
import { startDeployment } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { otherCaPem } from '../support/other-ca.js';
import { eventually } from '../support/pipeline.js';

const secure = inject('services').secureKafka;

// The local stack always has the SASL_SSL listener; services given by KAIROS_* variables may not.
test.skipIf(!secure)(
  'apps, the worker SDK and the client SDK run a job over SASL_SSL (SCRAM-SHA-256, SCRAM-SHA-512, PLAIN)',
  async () => {
    const s = secure!;
    const ns = await useNamespace('sasl-ssl');
    const ca = readFileSync(s.caFile, 'utf8');
    const password = readFileSync(s.passwordFile, 'utf8').trim();
    // The apps read their security from KAIROS_* settings, as in production.
    const d = await startDeployment(ns, {
      apps: ['ingest', 'delay-tier', 'tracker'],
      env: {
        KAIROS_KAFKA_BROKERS: s.brokers,
        KAIROS_KAFKA_SSL_CA_FILE: s.caFile,
        KAIROS_KAFKA_SASL_MECHANISM: 'scram-sha-256',
        KAIROS_KAFKA_SASL_USERNAME: s.username,
        KAIROS_KAFKA_SASL_PASSWORD_FILE: s.passwordFile,
      },
    });
    const handled: string[] = [];
    const worker = new Worker({
      brokers: [s.brokers],
      ssl: { ca },
      sasl: { mechanism: 'scram-sha-512', username: s.username, password },
      registryUrl: ns.services.registryUrl,
      redisUrl: ns.services.redisUrl,
      redisKeyPrefix: ns.prefix,
      topicPrefix: ns.prefix,
      resourceClasses: ['default'],
    });
    worker.handle<{ n: number }>('secure.hello', (_payload, ctx) => void handled.push(ctx.jobId));
    ns.defer(() => worker.stop());
    await worker.start();
    const client = new KairosClient({
      brokers: [s.brokers],
      ssl: { ca },
      sasl: { mechanism: 'plain', username: s.username, password },
      registryUrl: ns.services.registryUrl,
      topicPrefix: ns.prefix,
      tenant: 'acme',
      outcomes: true,
    });
    ns.defer(() => client.close());
    await client.start();
    const sent = await client.schedule({ type: 'secure.hello', resourceClass: 'default', payload: { n: 1 } });
    const outcome = await client.awaitOutcome(sent, { timeoutMs: 60_000 });
    expect(outcome.status).toBe('accepted');
    const jobId = (outcome as { jobId: string }).jobId;
    await eventually('the worker on SASL_SSL to run the job', () => handled.includes(jobId));
    await eventually('the job to be SUCCEEDED', async () => {
      const { rows } = await d.pool.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [jobId]);
      return rows[0]?.state === 'SUCCEEDED';
    });
  },
  180_000,
);

test.skipIf(!secure)('a wrong password fails fast, naming the broker and the mechanism', async () => {
  const s = secure!;
  const ns = await useNamespace('sasl-wrong');
  const client = new KairosClient({
    brokers: [s.brokers],
    ssl: { ca: readFileSync(s.caFile, 'utf8') },
    sasl: { mechanism: 'scram-sha-512', username: s.username, password: 'not-the-password' },
    registryUrl: ns.services.registryUrl,
    topicPrefix: ns.prefix,
    tenant: 'acme',
  });
  ns.defer(() => client.close());
  const t0 = Date.now();
  const err = await client.start().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err?.name).toBe('KafkaAuthenticationError');
  expect(err?.message).toContain(s.brokers);
  expect(err?.message).toMatch(/SASL SCRAM-SHA-512 as "kairos"/);
  expect(Date.now() - t0).toBeLessThan(10_000);
});

test.skipIf(!secure)(
  'a CA that did not sign the broker certificate is refused at connect',
  async () => {
    const s = secure!;
    const ns = await useNamespace('tls-wrong-ca');
    const client = new KairosClient({
      brokers: [s.brokers],
      ssl: { ca: otherCaPem() },
      sasl: {
        mechanism: 'plain',
        username: s.username,
        password: readFileSync(s.passwordFile, 'utf8').trim(),
      },
      registryUrl: ns.services.registryUrl,
      topicPrefix: ns.prefix,
      tenant: 'acme',
    });
    ns.defer(() => client.close());
    const err = await client.start().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('KafkaAuthenticationError');
    expect(err?.message).toMatch(/TLS with Kafka failed at brokers/);
  },
  60_000,
);

test.skipIf(!secure)(
  'OAUTHBEARER: the token provider hook logs the client SDK in, at every authentication',
  async () => {
    const s = secure!;
    const ns = await useNamespace('oauthbearer');
    await ensureTopics(ns.kafka, topicCatalogue({ prefix: ns.prefix, resourceClasses: ['default'] }));
    let calls = 0;
    const client = new KairosClient({
      brokers: [s.brokers],
      ssl: { ca: readFileSync(s.caFile, 'utf8') },
      sasl: {
        mechanism: 'oauthbearer',
        oauthBearerProvider: () => {
          calls++;
          return Promise.resolve({ value: unsecuredOAuthToken(s.username) });
        },
      },
      registryUrl: ns.services.registryUrl,
      topicPrefix: ns.prefix,
      tenant: 'acme',
    });
    ns.defer(() => client.close());
    await client.start();
    const sent = await client.schedule({ type: 'secure.oauth', resourceClass: 'default', payload: {} });
    expect(sent.tenant).toBe('acme');
    expect(calls).toBeGreaterThanOrEqual(1);
  },
);
