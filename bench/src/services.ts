import { resolve } from 'node:path';
import { bootstrap, serviceUrls, stackConfigFromEnv, up } from '@kairos/ops';
import type { BenchEnv } from './adapter.js';

export type BenchServices = Omit<BenchEnv, 'namespace'>;

/** The KAIROS_* URLs if all are set, else the local stack (started if needed). */
export async function benchServices(root: string, log: (line: string) => void): Promise<BenchServices> {
  const e = process.env;
  if (
    e.KAIROS_PG_URL &&
    e.KAIROS_REDIS_URL &&
    e.KAIROS_KAFKA_BROKERS &&
    e.KAIROS_REGISTRY_URL &&
    e.KAIROS_CONNECT_URL
  ) {
    return {
      pgUrl: e.KAIROS_PG_URL,
      redisUrl: e.KAIROS_REDIS_URL,
      kafkaBrokers: e.KAIROS_KAFKA_BROKERS,
      registryUrl: e.KAIROS_REGISTRY_URL,
      connectUrl: e.KAIROS_CONNECT_URL,
      jobEventPartitions: Number(e.KAIROS_JOB_EVENT_PARTITIONS ?? '8'),
    };
  }
  const cfg = stackConfigFromEnv(root);
  await up(cfg, log);
  await bootstrap(cfg, log);
  const urls = serviceUrls(cfg);
  return {
    pgUrl: urls.KAIROS_PG_URL ?? '',
    redisUrl: urls.KAIROS_REDIS_URL ?? '',
    kafkaBrokers: urls.KAIROS_KAFKA_BROKERS ?? '',
    registryUrl: urls.KAIROS_REGISTRY_URL ?? '',
    connectUrl: urls.KAIROS_CONNECT_URL ?? '',
    jobEventPartitions: cfg.jobEventPartitions,
  };
}

export const ROOT = resolve(import.meta.dirname, '..', '..');
