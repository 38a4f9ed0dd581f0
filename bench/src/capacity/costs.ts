import { readFileSync } from 'node:fs';

/** One measured job's cost in each component, from the W11 scale benchmark (and W7 for memory). */
export interface PerJobCosts {
  /** CPU milliseconds per job by component, net of idle (`delay-tier`, `postgres`, `connect`…). */
  readonly cpuMs: Readonly<Record<string, number>>;
  readonly redisCommands: number;
  /** MEMORY USAGE of one job waiting in a hot set (record, queue entry, version marker). */
  readonly redisBytesPerHotJob: number;
  readonly walBytes: number;
  readonly rowWrites: number;
  /** Bytes appended to Kafka logs per job, one copy (replication multiplies it). */
  readonly kafkaBytes: number;
  /** Where the figures came from, for the report. */
  readonly source: string;
}

interface Row {
  readonly workload: string;
  readonly variant: string;
  readonly metric: string;
  readonly value: number;
}

const CPU_PREFIX = 'CPU per job, net of idle: ';

function rowsOf(file: string): Row[] {
  return (JSON.parse(readFileSync(file, 'utf8')) as { results: Row[] }).results;
}

/**
 * The costs of one W11 configuration (default: the largest, most instances and partitions) and
 * W7's bytes per hot job. A metric missing from the results is an error: the model must not
 * silently size a component at zero.
 */
export function loadCosts(scaleResults: string, tierResults: string, variant?: string): PerJobCosts {
  const w11 = rowsOf(scaleResults).filter((r) => r.workload === 'W11');
  const variants = [...new Set(w11.map((r) => r.variant))];
  const chosen = variant ?? variants.at(-1);
  if (chosen === undefined || !variants.includes(chosen))
    throw new Error(
      `no W11 configuration "${String(chosen)}" in ${scaleResults}; it has: ${variants.join('; ')}`,
    );
  const rows = w11.filter((r) => r.variant === chosen);
  const get = (metric: string, from: readonly Row[] = rows): number => {
    const r = from.find((x) => x.metric === metric);
    if (r === undefined || !Number.isFinite(r.value)) throw new Error(`"${metric}" missing for ${chosen}`);
    return r.value;
  };
  const hot = rowsOf(tierResults).filter(
    (r) => r.workload === 'W7' && r.variant.endsWith('jobs in the hot set'),
  );
  return {
    cpuMs: Object.fromEntries(
      rows
        .filter((r) => r.metric.startsWith(CPU_PREFIX))
        .map((r) => [r.metric.slice(CPU_PREFIX.length), r.value]),
    ),
    redisCommands: get('Redis commands per job'),
    redisBytesPerHotJob: get('redis per hot job (MEMORY USAGE)', hot),
    walBytes: get('PostgreSQL WAL per job'),
    rowWrites: get('PostgreSQL row writes per job'),
    kafkaBytes: get('Kafka log bytes per job'),
    source: `W11 "${chosen}" (${scaleResults}), W7 hot-set memory (${tierResults})`,
  };
}
