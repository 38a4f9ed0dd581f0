import { createPool, ensureJobPartitions, migrate } from '@kairos/db';
import { createKafka, ensureTopics, topicCatalogue, type KafkaClientOptions } from '@kairos/kafka';
import pg from 'pg';
import { heartbeatQueryFor, readConnectorFiles, upsertConnector, type ConnectorFile } from './connectors.js';

export interface BootstrapTarget {
  readonly kafkaBrokers: string;
  readonly connectUrl: string;
  readonly pgUrl: string;
  /** Folder holding connector JSON files. */
  readonly connectorsDir: string;
  readonly jobEventPartitions: number;
  /** TLS and SASL of the Kafka admin client. Default: plaintext. */
  readonly kafka?: Omit<KafkaClientOptions, 'brokers'>;
  /** Schema of Kairos's tables (created if missing). Default: public. */
  readonly schema?: string;
  /** Prefix of every topic name. Default: ''. */
  readonly topicPrefix?: string;
  /** Resource classes to create task and DLQ topics for. Default: the catalogue's. */
  readonly resourceClasses?: readonly string[];
  /** Copies of each topic partition. Default: 1. */
  readonly replicationFactor?: number;
  /** `min.insync.replicas` of every topic. Default: the broker's. */
  readonly minInsyncReplicas?: number;
  /**
   * PostgreSQL as Kafka Connect reaches it (host, port, user, password, database), when that is
   * not what the connector file's `${env:…}` placeholders give the Connect workers. Default: the
   * file as it is.
   */
  readonly connectPgUrl?: string;
  /**
   * The Kafka the connector writes to, as Connect reaches it, when that is not the Kafka the
   * Connect workers themselves run on (their producer and admin are pointed there). Default: the
   * workers' Kafka.
   */
  readonly connectKafkaBrokers?: string;
  /** Register no connector (Debezium is run another way). Default: false. */
  readonly skipConnector?: boolean;
}

/**
 * Connect's client overrides that make one connector write to another Kafka than its workers'
 * (the workers must allow them: `connector.client.config.override.policy`, All by default).
 */
export function connectorKafkaOverrides(brokers: string): Record<string, string> {
  if (brokers.trim() === '') throw new RangeError('the connector Kafka brokers must not be empty');
  return {
    'producer.override.bootstrap.servers': brokers,
    'admin.override.bootstrap.servers': brokers,
  };
}

/** The outbox connector aimed at the target: its database, its schema's outbox, its topic prefix. */
export function targetConnector(file: ConnectorFile, t: BootstrapTarget): ConnectorFile {
  const config = { ...file.config };
  if (t.connectPgUrl !== undefined) {
    const u = new URL(t.connectPgUrl);
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
      throw new RangeError(`connect PostgreSQL URL must be postgres://…, got ${t.connectPgUrl}`);
    Object.assign(config, {
      'database.hostname': u.hostname,
      'database.port': u.port || '5432',
      'database.user': decodeURIComponent(u.username),
      'database.password': decodeURIComponent(u.password),
      'database.dbname': u.pathname.slice(1),
    });
  }
  if (t.connectKafkaBrokers !== undefined)
    Object.assign(config, connectorKafkaOverrides(t.connectKafkaBrokers));
  const schema = t.schema ?? 'public';
  const prefix = t.topicPrefix ?? '';
  if (config['table.include.list'] !== undefined) config['table.include.list'] = `${schema}.outbox`;
  Object.assign(config, heartbeatQueryFor(config, schema));
  // One slot and publication per schema: another deployment in the same database has its own.
  if (schema !== 'public') {
    const suffix = schema.toLowerCase().replace(/[^a-z0-9_]/g, '_');
    for (const key of ['slot.name', 'publication.name'])
      if (config[key] !== undefined) config[key] = `${config[key]}_${suffix}`;
  }
  if (prefix) {
    config['transforms.outbox.route.topic.replacement'] = `${prefix}kairos.\${routedByValue}`;
    if (config['topic.prefix'] !== undefined) config['topic.prefix'] = `${prefix}${config['topic.prefix']}`;
  }
  return { name: `${prefix}${file.name}`, config };
}

/** Creates the schema if it does not exist (the migrations then fill it). */
export async function ensureSchema(pgUrl: string, schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } finally {
    await admin.end();
  }
}

async function migrateTarget(t: BootstrapTarget, log: (line: string) => void): Promise<void> {
  const schema = t.schema ?? 'public';
  await ensureSchema(t.pgUrl, schema);
  const pool = createPool({ connectionString: t.pgUrl, schema, max: 1, applicationName: 'kairos-bootstrap' });
  try {
    const applied = await migrate(pool);
    await ensureJobPartitions(pool, new Date());
    log(`migrations: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
  } finally {
    await pool.end();
  }
}

/**
 * Migrates the database, creates the catalogue's topics and registers every connector
 * (idempotent), on any cluster. Migrations come first: the outbox connector needs its table.
 */
export async function bootstrapTarget(target: BootstrapTarget, log: (line: string) => void): Promise<void> {
  await migrateTarget(target, log);
  const kafka = createKafka({
    ...target.kafka,
    brokers: target.kafkaBrokers.split(','),
    clientId: 'kairos-bootstrap',
  });
  const catalogue = topicCatalogue({
    prefix: target.topicPrefix ?? '',
    jobEventPartitions: target.jobEventPartitions,
    ...(target.resourceClasses ? { resourceClasses: target.resourceClasses } : {}),
    ...(target.replicationFactor !== undefined ? { replicationFactor: target.replicationFactor } : {}),
    ...(target.minInsyncReplicas !== undefined ? { minInsyncReplicas: target.minInsyncReplicas } : {}),
  });
  const topics = await ensureTopics(kafka, catalogue);
  log(
    `topics: ${topics.created.length} created${topics.created.length ? ` (${topics.created.join(', ')})` : ''}`,
  );
  for (const m of topics.mismatched) log(`warning: ${m}`);
  if (target.skipConnector) return;
  for (const file of readConnectorFiles(target.connectorsDir)) {
    const connector = targetConnector(file, target);
    await upsertConnector(target.connectUrl, connector);
    log(`connector ${connector.name}: RUNNING`);
  }
}
