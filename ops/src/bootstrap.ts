import { resolve } from 'node:path';
import { createKafka, ensureTopics, topicCatalogue } from '@kairos/kafka';
import { serviceUrls, type StackConfig } from './config.js';
import { readConnectorFiles, upsertConnector } from './connectors.js';

export interface BootstrapTarget {
  readonly kafkaBrokers: string;
  readonly connectUrl: string;
  /** Folder holding connector JSON files. */
  readonly connectorsDir: string;
  readonly jobEventPartitions: number;
}

/** Creates the catalogue's topics and registers every connector (idempotent), on any stack. */
export async function bootstrapTarget(target: BootstrapTarget, log: (line: string) => void): Promise<void> {
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
      connectorsDir: resolve(cfg.root, 'connectors'),
      jobEventPartitions: cfg.jobEventPartitions,
    },
    log,
  );
}
