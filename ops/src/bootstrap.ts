import { resolve } from 'node:path';
import { bootstrapTarget } from '@kairos/bootstrap';
import { serviceUrls, type StackConfig } from './config.js';

/** Prepares the local stack's services (what `kairos bootstrap` does on any cluster). */
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
