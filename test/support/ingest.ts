import { KairosClient, type KairosClientOptions } from '@kairos/client';
import { JobCommands, ScheduleCommands } from '@kairos/commands';
import { compileJobLimits } from '@kairos/core';
import { createPool, ensureJobPartitions, migrate, type Pool } from '@kairos/db';
import { Ingest, type IngestOptions } from '@kairos/ingest';
import {
  AvroCodec,
  createRegistryClient,
  ensureTopics,
  topicCatalogue,
  topicNames,
  type RegistryClient as Client,
  type TopicNames,
} from '@kairos/kafka';
import { createLogger } from '@kairos/observability';
import type { ScheduleRequestOutcomeRecord, ScheduleRequestRejectionRecord } from '@kairos/schemas';
import pg from 'pg';
import type { Namespace } from './namespace.js';
import { RESOURCE_CLASSES, type Pipeline } from './pipeline.js';

export interface IngestHarness {
  readonly ingest: Ingest;
  readonly pool: Pool;
  readonly commands: JobCommands;
  readonly schedules: ScheduleCommands;
  readonly topics: TopicNames;
  readonly registry: Client;
  /** Fatal errors the ingest reported (a test expects none). */
  readonly fatal: Error[];
}

/**
 * The ingest (apps/ingest) in this process, in the test's namespace: on a pipeline's pool and
 * command handlers, or, without one, on the namespace's schema (migrated) in `pgUrl` (default: the
 * shared PostgreSQL) with topics under the namespace's prefix. Stopped on cleanup.
 */
export async function startIngest(
  ns: Namespace,
  options: {
    readonly pipeline?: Pipeline;
    readonly pgUrl?: string;
    readonly ingest?: Partial<Omit<IngestOptions, 'kafka' | 'registry' | 'commands' | 'pool' | 'topics'>>;
  } = {},
): Promise<IngestHarness> {
  const registry = createRegistryClient({ url: ns.services.registryUrl });
  const topics = topicNames(ns.prefix);
  let pool: Pool;
  let commands: JobCommands;
  let schedules: ScheduleCommands;
  if (options.pipeline) {
    pool = options.pipeline.pool;
    commands = options.pipeline.commands;
    schedules = options.pipeline.schedules;
  } else {
    const pgUrl = options.pgUrl ?? ns.services.pgUrl;
    if (options.pgUrl !== undefined) {
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA IF NOT EXISTS "${ns.schema}"`);
      await admin.end();
    }
    pool = createPool({ connectionString: pgUrl, schema: ns.schema, max: 6, connectionTimeoutMs: 2000 });
    ns.defer(() => pool.end());
    await migrate(pool);
    await ensureJobPartitions(pool, new Date());
    await ensureTopics(
      ns.kafka,
      topicCatalogue({
        prefix: ns.prefix,
        resourceClasses: RESOURCE_CLASSES,
        jobEventPartitions: ns.services.jobEventPartitions,
      }),
    );
    const handlers = {
      pool,
      codec: new AvroCodec(registry),
      jobEventsTopic: topics.jobEvents,
      jobEventPartitions: ns.services.jobEventPartitions,
      limits: compileJobLimits({ resourceClasses: RESOURCE_CLASSES }),
    };
    commands = new JobCommands(handlers);
    schedules = new ScheduleCommands(handlers);
  }
  const fatal: Error[] = [];
  const ingest = new Ingest({
    kafka: ns.kafka,
    registry,
    commands,
    schedules,
    pool,
    topics,
    groupId: `${ns.prefix}ingest`,
    instanceId: ns.id,
    log: createLogger({ component: 'ingest', level: process.env.KAIROS_TEST_LOG ?? 'warn' }),
    onFatal: (err) => fatal.push(err),
    ...options.ingest,
  });
  await ingest.start();
  ns.defer(() => ingest.stop());
  return { ingest, pool, commands, schedules, topics, registry, fatal };
}

export interface Answers {
  readonly outcomes: ScheduleRequestOutcomeRecord[];
  readonly rejections: {
    readonly key: string | undefined;
    readonly record: ScheduleRequestRejectionRecord;
  }[];
}

/**
 * Follows the reply and rejection topics from the beginning (read_committed: the ingest writes
 * them in transactions), decoding each answer through the registry as any client would.
 */
export async function collectAnswers(ns: Namespace, registry: Client): Promise<Answers> {
  const topics = topicNames(ns.prefix);
  const codec = new AvroCodec(registry);
  const answers: Answers = { outcomes: [], rejections: [] };
  const consumer = ns.consumer({ groupId: `${ns.prefix}answers-${Math.random().toString(36).slice(2)}` });
  await consumer.connect();
  await consumer.subscribe({
    topics: [topics.scheduleRequestsReplies, topics.scheduleRequestsRejected],
    fromBeginning: true,
  });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const value = await codec.decode(topic, message.value!);
      if (topic === topics.scheduleRequestsReplies)
        answers.outcomes.push(value as ScheduleRequestOutcomeRecord);
      else {
        answers.rejections.push({
          key: message.key?.toString(),
          record: value as ScheduleRequestRejectionRecord,
        });
      }
    },
  });
  ns.defer(() => consumer.disconnect());
  return answers;
}

/**
 * A producer on the public SDK (libs/client) in the namespace: tenant `acme` and outcomes followed
 * unless `options` say otherwise; closed on cleanup.
 */
export function startClient(ns: Namespace, options: Partial<KairosClientOptions> = {}): KairosClient {
  const c = new KairosClient({
    brokers: ns.services.kafkaBrokers.split(','),
    registryUrl: ns.services.registryUrl,
    topicPrefix: ns.prefix,
    tenant: 'acme',
    outcomes: true,
    outcomeTimeoutMs: 300_000,
    ...options,
  });
  ns.defer(() => c.close());
  return c;
}
