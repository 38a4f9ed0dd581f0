import { resolve } from 'node:path';
import { createPool, ensureJobPartitions, migrate } from '@kairos/db';
import { createKafka, ensureTopics, topicCatalogue } from '@kairos/kafka';
import { serviceUrls, type StackConfig } from './config.js';
import { readConnectorFiles, upsertConnector } from './connectors.js';

export interface BootstrapTarget {
  readonly kafkaBrokers: string;
  readonly connectUrl: string;
  readonly pgUrl: string;
  /** Folder holding connector JSON files. */
  readonly connectorsDir: string;
  readonly jobEventPartitions: number;
}

/**
 * Migrates the database, creates the catalogue's topics and registers every connector
 * (idempotent), on any stack. Migrations come first: the outbox connector needs its table.
 */
export async function bootstrapTarget(target: BootstrapTarget, log: (line: string) => void): Promise<void> {
  const pool = createPool({ connectionString: target.pgUrl, max: 1, applicationName: 'kairos-stack' });
  try {
    const applied = await migrate(pool);
    await ensureJobPartitions(pool, new Date());
    log(`migrations: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
  } finally {
    await pool.end();
  }
  const kafka = createKafka({ brokers: target.kafkaBrokers.split(','), clientId: 'kairos-stack' });
  const topics = await ensureTopics(kafka, topicCatalogue({ jobEventPartitions: target.jobEventPartitions }));
  log(
    `topics: ${topics.created.length} created${topics.created.length ? ` (${topics.created.join(', ')})` : ''}`,
  );
  for (const m of topics.mismatched) log(`warning: ${m}`);
  for (const connector of readConnectorFiles(target.connectorsDir)) {
    await upsertConnector(target.connectUrl, connector);
    log(`connector ${connector.name}: RUNNING`);
  }
}

export function bootstrap(cfg: StackConfig, log: (line: string) => void): Promise<void> {
  const urls = serviceUrls(cfg);
  return bootstrapTarget(
    {
      kafkaBrokers: urls.KAIROS_KAFKA_BROKERS ?? '',
      connectUrl: urls.KAIROS_CONNECT_URL ?? '',
      pgUrl: urls.KAIROS_PG_URL ?? '',
      connectorsDir: resolve(cfg.root, 'connectors'),
      jobEventPartitions: cfg.jobEventPartitions,
    },
    log,
  );
}
