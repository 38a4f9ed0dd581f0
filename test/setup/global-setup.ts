import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { bootstrap, bootstrapTarget, serviceUrls, stackConfigFromEnv, up } from '@kairos/ops';
import type { Services } from './services.js';

const root = resolve(import.meta.dirname, '..', '..');
const log = (line: string) => console.log(`[stack] ${line}`);

/** 1. URLs given in the environment: use them as they are. */
function fromEnvironment(): Services | undefined {
  const e = process.env;
  const { KAIROS_PG_URL, KAIROS_REDIS_URL, KAIROS_KAFKA_BROKERS, KAIROS_REGISTRY_URL, KAIROS_CONNECT_URL } =
    e;
  if (
    !KAIROS_PG_URL ||
    !KAIROS_REDIS_URL ||
    !KAIROS_KAFKA_BROKERS ||
    !KAIROS_REGISTRY_URL ||
    !KAIROS_CONNECT_URL
  ) {
    return undefined;
  }
  return {
    pgUrl: KAIROS_PG_URL,
    redisUrl: KAIROS_REDIS_URL,
    kafkaBrokers: KAIROS_KAFKA_BROKERS,
    registryUrl: KAIROS_REGISTRY_URL,
    connectUrl: KAIROS_CONNECT_URL,
    jobEventPartitions: Number(e.KAIROS_JOB_EVENT_PARTITIONS ?? '8'),
    source: 'environment',
  };
}

/** 2. A Docker engine answers: the same topology from docker-compose.yml via testcontainers. */
async function fromTestcontainers(): Promise<{ services: Services; stop: () => Promise<void> } | undefined> {
  if (process.env.KAIROS_TESTCONTAINERS === '0') return undefined;
  const tc = await import('testcontainers');
  try {
    await Promise.race([
      tc.getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 5000)),
    ]);
  } catch {
    return undefined;
  }
  log('Docker engine found: starting docker-compose.yml services with testcontainers');
  const env = await new tc.DockerComposeEnvironment(root, 'docker-compose.yml')
    .withWaitStrategy('connect', tc.Wait.forHttp('/connector-plugins', 8083))
    .withWaitStrategy('registry', tc.Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .up(['postgres', 'redis', 'kafka', 'connect', 'registry']);
  const cfg = stackConfigFromEnv(root);
  const urls = serviceUrls(cfg); // compose publishes the same host ports as the local stack
  const services: Services = {
    pgUrl: urls.KAIROS_PG_URL ?? '',
    redisUrl: urls.KAIROS_REDIS_URL ?? '',
    kafkaBrokers: urls.KAIROS_KAFKA_BROKERS ?? '',
    registryUrl: urls.KAIROS_REGISTRY_URL ?? '',
    connectUrl: urls.KAIROS_CONNECT_URL ?? '',
    jobEventPartitions: cfg.jobEventPartitions,
    source: 'testcontainers',
  };
  await bootstrapTarget(
    {
      kafkaBrokers: services.kafkaBrokers,
      connectUrl: services.connectUrl,
      pgUrl: services.pgUrl,
      connectorsDir: resolve(root, 'connectors'),
      jobEventPartitions: services.jobEventPartitions,
    },
    log,
  );
  return { services, stop: async () => void (await env.down()) };
}

/** 3. Otherwise the project's own local stack (ops/), started if it is not running. */
async function fromLocalStack(): Promise<Services> {
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
    source: 'local stack',
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = fromEnvironment();
  const tc = env ? undefined : await fromTestcontainers();
  const services = env ?? tc?.services ?? (await fromLocalStack());
  log(`services from the ${services.source}`);
  project.provide('services', services);
  return async () => {
    await tc?.stop();
  };
}
