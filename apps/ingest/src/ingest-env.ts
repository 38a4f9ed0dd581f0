import { EnvError, intVar } from '@kairos/config';
import { parseTenantSources, type TenantSources } from './tenant-policy.js';

/** The ingest's own settings, read from the environment at its entry point. */
export interface IngestEnv {
  /** KAIROS_TENANTS: comma-separated tenants allowed to send requests; unset or empty: any tenant. */
  readonly tenants: string[] | undefined;
  /**
   * KAIROS_INGEST_TENANT_SOURCE (`header:<name>` or `key-prefix:<separator>`) with
   * KAIROS_INGEST_SOURCE_TENANTS (`source=tenant|tenant;source=tenant`): which tenants each sender
   * may name. Both or neither; default none (no per-sender check).
   */
  readonly tenantSources: TenantSources | undefined;
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
    tenantSources: tenantSourcesEnv(env),
    partitionsConsumedConcurrently: intVar(env, 'KAIROS_INGEST_CONCURRENCY', 2, 1, 64),
    metricsHost: env.KAIROS_INGEST_METRICS_HOST ?? '127.0.0.1',
    metricsPort: intVar(env, 'KAIROS_INGEST_METRICS_PORT', 58093, 0, 65535),
  };
}

function tenantSourcesEnv(env: NodeJS.ProcessEnv): TenantSources | undefined {
  const from = env.KAIROS_INGEST_TENANT_SOURCE ?? '';
  const map = env.KAIROS_INGEST_SOURCE_TENANTS ?? '';
  if (from === '' && map === '') return undefined;
  if (from === '' || map === '') {
    throw new EnvError(
      'KAIROS_INGEST_TENANT_SOURCE and KAIROS_INGEST_SOURCE_TENANTS go together: set both or neither',
    );
  }
  try {
    return parseTenantSources(from, map);
  } catch (err) {
    throw new EnvError(
      `KAIROS_INGEST_TENANT_SOURCE / KAIROS_INGEST_SOURCE_TENANTS: ${(err as Error).message}`,
    );
  }
}
