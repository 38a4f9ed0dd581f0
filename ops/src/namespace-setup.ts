import { resolve } from 'node:path';
import { createPool, ensureJobPartitions, migrate, type Pool } from '@kairos/db';
import { ensureTopics, topicCatalogue } from '@kairos/kafka';
import type { Kafka } from 'kafkajs';
import { ensureSchema } from '@kairos/bootstrap';
import { registerNamespacedOutboxConnector } from './outbox-connector.js';

export interface HarnessServices {
  readonly pgUrl: string;
  /** The same PostgreSQL over TLS (`sslmode=verify-full`, the CA in the URL), where it has TLS. */
  readonly pgTlsUrl?: string;
  readonly redisUrl: string;
  readonly kafkaBrokers: string;
  readonly registryUrl: string;
  readonly connectUrl: string;
  readonly jobEventPartitions: number;
  /** A SASL_SSL listener of the same Kafka, where there is one (the local stack has). */
  readonly secureKafka?: SecureKafka;
  /**
   * Copies of every topic and `min.insync.replicas`, for a Kafka of several brokers (3 and 2).
   * Default: one copy, the broker's setting.
   */
  readonly topicReplication?: { readonly factor: number; readonly minInsync: number };
  /**
   * Where the namespace's outbox connector writes when `kafkaBrokers` is not the Kafka the Connect
   * worker itself runs on (its producer and admin get these brokers). Default: the worker's Kafka.
   */
  readonly connectorBrokers?: string;
}

/** Where and how to reach Kafka over SASL_SSL: the listener, the CA to trust, a SCRAM/PLAIN user. */
export interface SecureKafka {
  readonly brokers: string;
  readonly caFile: string;
  readonly username: string;
  readonly passwordFile: string;
}

/** One isolated Kairos deployment on shared services (tests and benchmarks run many side by side). */
export interface NamespaceSpec {
  readonly services: HarnessServices;
  /** Lower-case letters and digits: names the connector, slot and publication. */
  readonly id: string;
  /** Prefix of topics, consumer groups and Redis keys. */
  readonly prefix: string;
  /** PostgreSQL schema (created if missing). */
  readonly schema: string;
  readonly resourceClasses: readonly string[];
}

const CONNECTORS_DIR = resolve(import.meta.dirname, '..', '..', 'connectors');

/**
 * Makes a namespace ready for the apps, as `npm run stack -- up` does for the default one: its
 * schema migrated, this month's job partitions, its topics, and the production outbox connector
 * re-pointed at it. Undo steps are pushed onto `stops` (run newest first) as each step succeeds,
 * so a failure half-way still cleans up. Returns a pool on the schema (closed by `stops`).
 */
export async function prepareNamespace(
  spec: NamespaceSpec,
  kafka: Kafka,
  stops: (() => Promise<void>)[],
  poolMax = 10,
): Promise<Pool> {
  const { services, prefix, schema, resourceClasses } = spec;
  await ensureSchema(services.pgUrl, schema);
  const pool = createPool({ connectionString: services.pgUrl, schema, max: poolMax });
  stops.push(() => pool.end());
  await migrate(pool);
  await ensureJobPartitions(pool, new Date());
  await ensureTopics(
    kafka,
    topicCatalogue({
      prefix,
      resourceClasses,
      jobEventPartitions: services.jobEventPartitions,
      ...(services.topicReplication
        ? {
            replicationFactor: services.topicReplication.factor,
            minInsyncReplicas: services.topicReplication.minInsync,
          }
        : {}),
    }),
  );
  stops.push(
    await registerNamespacedOutboxConnector({
      connectUrl: services.connectUrl,
      pgUrl: services.pgUrl,
      connectorsDir: CONNECTORS_DIR,
      id: spec.id,
      topicPrefix: prefix,
      schema,
      ...(services.connectorBrokers ? { kafkaBrokers: services.connectorBrokers } : {}),
    }),
  );
  return pool;
}

/** Runs undo steps newest first, going on past failures; rethrows the first failure. */
export async function runStops(stops: (() => Promise<void>)[]): Promise<void> {
  let first: unknown;
  while (stops.length > 0) {
    const step = stops.pop();
    await step?.().catch((err: unknown) => (first ??= err));
  }
  if (first !== undefined) throw first instanceof Error ? first : new Error(JSON.stringify(first));
}
