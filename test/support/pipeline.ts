import { randomBytes } from 'node:crypto';
import { createApiServer } from '@kairos/api';
import { JobCommands } from '@kairos/commands';
import { compileJobLimits } from '@kairos/core';
import { createPool, ensureJobPartitions, migrate, type Pool } from '@kairos/db';
import { DelayTier, type HotRecord } from '@kairos/delay-tier';
import {
  AvroCodec,
  createRegistryClient,
  ensureTopics,
  topicCatalogue,
  topicNames,
  type TopicNames,
} from '@kairos/kafka';
import { Tracker } from '@kairos/tracker';
import { Worker, type WorkerOptions } from '@kairos/worker-sdk';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '@kairos/observability';
import { registerOutboxConnector } from './debezium.js';
import type { Namespace } from './namespace.js';

export const RESOURCE_CLASSES = ['critical', 'default', 'io'];

/** Component logs go to the test output at KAIROS_TEST_LOG level (default warn). */
const log = (component: string) => createLogger({ component, level: process.env.KAIROS_TEST_LOG ?? 'warn' });

export interface Pipeline {
  readonly ns: Namespace;
  readonly pool: Pool;
  readonly codec: AvroCodec;
  readonly topics: TopicNames;
  readonly commands: JobCommands;
  readonly api: FastifyInstance;
  readonly apiUrl: string;
  readonly delayTier: DelayTier;
  readonly tracker: Tracker;
  readonly dispatched: { record: HotRecord; atMs: number }[];
  worker(options?: Partial<WorkerOptions>): Worker;
}

/**
 * The whole pipeline of DESIGN.md section 1 inside one test namespace: migrations in the test's
 * schema, the production outbox connector re-pointed at it, topics under its prefix, and the
 * API, delay tier and tracker running in-process. Everything stops on cleanup.
 */
export async function startPipeline(ns: Namespace): Promise<Pipeline> {
  const pool = createPool({ connectionString: ns.services.pgUrl, schema: ns.schema, max: 10 });
  ns.defer(() => pool.end());
  await migrate(pool);
  await ensureJobPartitions(pool, new Date());
  const partitions = ns.services.jobEventPartitions;
  await ensureTopics(
    ns.kafka,
    topicCatalogue({ prefix: ns.prefix, resourceClasses: RESOURCE_CLASSES, jobEventPartitions: partitions }),
  );
  await registerOutboxConnector(ns);
  const topics = topicNames(ns.prefix);
  const registry = createRegistryClient({ url: ns.services.registryUrl });
  const codec = new AvroCodec(registry);
  const commands = await JobCommands.create({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: partitions,
    limits: compileJobLimits({ resourceClasses: RESOURCE_CLASSES }),
  });
  const api = createApiServer({ commands, log: log('api') });
  const apiUrl = await api.listen({ host: '127.0.0.1', port: 0 });
  ns.defer(() => api.close());

  const dispatched: Pipeline['dispatched'] = [];
  const redis = ns.redis();
  ns.defer(async () => void (await redis.quit()));
  const delayTier = new DelayTier({
    kafka: ns.kafka,
    codec,
    redis,
    pool,
    topics,
    resourceClasses: RESOURCE_CLASSES,
    instanceId: `delay-tier-${randomBytes(2).toString('hex')}`,
    groupId: `${ns.prefix}delay-tier`,
    log: log('delay-tier'),
    onDispatched: (record, atMs) => dispatched.push({ record, atMs }),
  });
  await delayTier.start();
  ns.defer(() => delayTier.stop());
  const tracker = new Tracker({
    kafka: ns.kafka,
    codec,
    pool,
    topics,
    resourceClasses: RESOURCE_CLASSES,
    groupId: `${ns.prefix}tracker`,
    log: log('tracker'),
  });
  await tracker.start();
  ns.defer(() => tracker.stop());

  return {
    ns,
    pool,
    codec,
    topics,
    commands,
    api,
    apiUrl,
    delayTier,
    tracker,
    dispatched,
    worker(options = {}) {
      const w = new Worker({
        brokers: ns.services.kafkaBrokers.split(','),
        registryUrl: ns.services.registryUrl,
        resourceClasses: RESOURCE_CLASSES,
        topicPrefix: ns.prefix,
        concurrency: 50,
        logger: log('worker'),
        ...options,
      });
      ns.defer(() => w.stop());
      return w;
    },
  };
}

/** Polls until check() is true (bounded), so waits are on observed state, never on sleeps. */
export async function eventually(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
