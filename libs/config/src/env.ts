import { hostname } from 'node:os';
import type { TlsOptions } from '@kairos/core';
import type { KafkaClientOptions, RegistryOptions } from '@kairos/kafka';
import { connectionsEnv, type ConnectionsEnv } from './connections-env.js';
import { boolVar, EnvError, intVar, listVar } from './env-vars.js';

export { EnvError, intVar };

/** How to reach Kafka and the registry: what a tool that touches only Kafka needs (the kairos CLI). */
export interface KafkaEnv extends ConnectionsEnv {
  /** KAIROS_KAFKA_BROKERS, comma-separated, default `127.0.0.1:59092`. */
  readonly kafkaBrokers: string[];
  /** KAIROS_REGISTRY_URL, default the local stack's Apicurio ccompat API. */
  readonly registryUrl: string;
  /** KAIROS_TOPIC_PREFIX, default ''. */
  readonly topicPrefix: string;
  /** KAIROS_RESOURCE_CLASSES, comma-separated, default `critical,default,cpu,io`. */
  readonly resourceClasses: string[];
  /** KAIROS_INSTANCE_ID, default `<host>-<pid>`. */
  readonly instanceId: string;
}

export function kafkaEnv(env: NodeJS.ProcessEnv = process.env): KafkaEnv {
  return {
    kafkaBrokers: listVar(env, 'KAIROS_KAFKA_BROKERS', '127.0.0.1:59092'),
    registryUrl: env.KAIROS_REGISTRY_URL ?? 'http://127.0.0.1:58081/apis/ccompat/v7',
    topicPrefix: env.KAIROS_TOPIC_PREFIX ?? '',
    resourceClasses: listVar(env, 'KAIROS_RESOURCE_CLASSES', 'critical,default,cpu,io'),
    instanceId: env.KAIROS_INSTANCE_ID ?? `${hostname()}-${process.pid}`,
    ...connectionsEnv(env),
  };
}

/** Settings every Kairos app reads from the environment, with their defaults. */
export interface KairosEnv extends KafkaEnv {
  /** KAIROS_PG_URL (required). */
  readonly pgUrl: string;
  /** KAIROS_DB_SCHEMA, default `public`. */
  readonly dbSchema: string;
  /** KAIROS_REDIS_URL, default `redis://127.0.0.1:56379`; several comma-separated: a Redis Cluster's seeds. */
  readonly redisUrl: string;
  /** KAIROS_REDIS_KEY_PREFIX: prepended to every Redis key (several deployments on one Redis), default ''. */
  readonly redisKeyPrefix: string;
  /** KAIROS_JOB_EVENT_PARTITIONS, default 8. Must equal the topic's partition count. */
  readonly jobEventPartitions: number;
  /**
   * KAIROS_KAFKA_SESSION_TIMEOUT_MS: how soon a dead app's Kafka partitions move to another
   * instance, default 6,000 (the broker's usual minimum).
   */
  readonly sessionTimeoutMs: number;
  /** KAIROS_LOG_LEVEL, default `info`. */
  readonly logLevel: string;
  /**
   * KAIROS_OUTBOX_RELAY (`true`/`false`), default true: job events are also sent to Kafka right
   * after their commit, so no job waits for Debezium's polling; false leaves them to Debezium.
   */
  readonly outboxRelay: boolean;
}

export function kairosEnv(env: NodeJS.ProcessEnv = process.env): KairosEnv {
  const pgUrl = env.KAIROS_PG_URL;
  if (!pgUrl) throw new EnvError('KAIROS_PG_URL is required (e.g. postgres://kairos@127.0.0.1:55432/kairos)');
  return {
    pgUrl,
    dbSchema: env.KAIROS_DB_SCHEMA ?? 'public',
    redisUrl: env.KAIROS_REDIS_URL ?? 'redis://127.0.0.1:56379',
    redisKeyPrefix: env.KAIROS_REDIS_KEY_PREFIX ?? '',
    jobEventPartitions: intVar(env, 'KAIROS_JOB_EVENT_PARTITIONS', 8, 1, 256),
    sessionTimeoutMs: intVar(env, 'KAIROS_KAFKA_SESSION_TIMEOUT_MS', 6000, 600, 1_800_000),
    logLevel: env.KAIROS_LOG_LEVEL ?? 'info',
    outboxRelay: boolVar(env, 'KAIROS_OUTBOX_RELAY', true),
    ...kafkaEnv(env),
  };
}

/** Runs an app's main, turning a configuration error into one clear line and exit code 2. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    if (err instanceof EnvError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  });
}

/** Calls stop() once on SIGINT or SIGTERM, then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

/** An app's Kafka client options: the brokers, its client id, TLS and SASL. */
export function kafkaClientOptions(env: KafkaEnv, app: string): KafkaClientOptions {
  return { brokers: env.kafkaBrokers, clientId: `kairos-${app}-${env.instanceId}`, ...env.kafkaSecurity };
}

/** The registry client's options: the URL, credentials and TLS. */
export function registryOptions(env: KafkaEnv): RegistryOptions {
  return { url: env.registryUrl, auth: env.registryAuth, tls: env.registryTls };
}

/** The delay tier's Redis options besides the URL: the key prefix and TLS material. */
export function redisOptions(env: KairosEnv): { keyPrefix: string; tls?: TlsOptions } {
  return { keyPrefix: env.redisKeyPrefix, ...(env.redisTls ? { tls: env.redisTls } : {}) };
}
