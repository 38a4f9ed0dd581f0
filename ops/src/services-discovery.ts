import { bootstrap } from './bootstrap.js';
import { serviceUrls, type StackConfig } from './config.js';
import type { HarnessServices } from './harness.js';
import type { SecureKafka } from './namespace-setup.js';
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
    ...(env.KAIROS_PG_TLS_URL ? { pgTlsUrl: env.KAIROS_PG_TLS_URL } : {}),
    ...secureKafkaFromEnv(env),
  };
}

/** KAIROS_KAFKA_SECURE_*: the SASL_SSL listener of the services named in the environment, if set. */
function secureKafkaFromEnv(env: NodeJS.ProcessEnv): { secureKafka?: SecureKafka } {
  const brokers = env.KAIROS_KAFKA_SECURE_BROKERS;
  const caFile = env.KAIROS_KAFKA_SECURE_CA_FILE;
  const username = env.KAIROS_KAFKA_SECURE_USERNAME;
  const passwordFile = env.KAIROS_KAFKA_SECURE_PASSWORD_FILE;
  if (!brokers || !caFile || !username || !passwordFile) return {};
  return { secureKafka: { brokers, caFile, username, passwordFile } };
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
    ...(urls.KAIROS_PG_TLS_URL ? { pgTlsUrl: urls.KAIROS_PG_TLS_URL } : {}),
    ...secureKafkaFromEnv(urls),
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
