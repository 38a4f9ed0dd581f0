import { EnvError, intVar } from '@kairos/config';

/** The ingest's own settings, read from the environment at its entry point. */
export interface IngestEnv {
  /** KAIROS_TENANTS: comma-separated tenants allowed to send requests; unset or empty: any tenant. */
  readonly tenants: string[] | undefined;
  /** KAIROS_INGEST_CONCURRENCY: partitions processed at once, default 2. */
  readonly partitionsConsumedConcurrently: number;
  /** KAIROS_INGEST_METRICS_HOST / _PORT: where /metrics listens, default 127.0.0.1:58093 (0: any free port). */
  readonly metricsHost: string;
  readonly metricsPort: number;
}

export function ingestEnv(env: NodeJS.ProcessEnv = process.env): IngestEnv {
  const tenants = (env.KAIROS_TENANTS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (tenants.some((t) => !/^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(t))) {
    throw new EnvError(
      `KAIROS_TENANTS=${env.KAIROS_TENANTS} must list tenant names (letters, digits, . _ : -)`,
    );
  }
  return {
    tenants: tenants.length > 0 ? tenants : undefined,
    partitionsConsumedConcurrently: intVar(env, 'KAIROS_INGEST_CONCURRENCY', 2, 1, 64),
    metricsHost: env.KAIROS_INGEST_METRICS_HOST ?? '127.0.0.1',
    metricsPort: intVar(env, 'KAIROS_INGEST_METRICS_PORT', 58093, 0, 65535),
  };
}
