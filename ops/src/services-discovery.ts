import { bootstrap } from './bootstrap.js';
import { serviceUrls, type StackConfig } from './config.js';
import type { HarnessServices } from './harness.js';
import { up } from './stack.js';

/** The services named by KAIROS_* variables, if all five URLs are set. */
export function servicesFromEnv(env: NodeJS.ProcessEnv): HarnessServices | undefined {
  const { KAIROS_PG_URL, KAIROS_REDIS_URL, KAIROS_KAFKA_BROKERS, KAIROS_REGISTRY_URL, KAIROS_CONNECT_URL } =
    env;
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
    jobEventPartitions: Number(env.KAIROS_JOB_EVENT_PARTITIONS ?? '8'),
  };
}

/** The addresses of the local stack described by cfg. */
export function stackServices(cfg: StackConfig): HarnessServices {
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

/** The local stack, started (and bootstrapped) if it is not running. */
export async function ensureLocalStack(
  cfg: StackConfig,
  log: (line: string) => void,
): Promise<HarnessServices> {
  await up(cfg, log);
  await bootstrap(cfg, log);
  return stackServices(cfg);
}
