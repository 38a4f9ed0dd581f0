import { readdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Pool } from '@kairos/db';
import { Redis } from 'ioredis';

/**
 * What a deployment wrote to its services, counted from the services' own statistics: Redis
 * commands (every node of a cluster), PostgreSQL WAL bytes and row writes (one schema), Kafka
 * log bytes (the local broker's segment files). Two readings apart give the cost of the work
 * between them; the capacity model (docs/capacity.md) scales those costs per job.
 */
export interface Footprint {
  readonly redisCommands: number;
  readonly walBytes: number;
  readonly rowWrites: number;
  readonly kafkaBytes: number;
}

export interface FootprintSources {
  /** Every Redis node to count (a cluster's masters), as redis:// URLs. */
  readonly redisNodes: readonly string[];
  readonly pool: Pool;
  readonly schema: string;
  /** The local broker's log.dirs; undefined when Kafka is not the local stack's (then 0 bytes). */
  readonly kafkaLogDir: string | undefined;
}

async function redisCommands(urls: readonly string[]): Promise<number> {
  const counts = await Promise.all(
    urls.map(async (url) => {
      const r = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: true });
      try {
        await r.connect();
        return Number(/total_commands_processed:(\d+)/.exec(await r.info('stats'))?.[1] ?? NaN);
      } finally {
        r.disconnect();
      }
    }),
  );
  // Each reading's own INFO (and its connection's HELLO/CLIENT calls) is not the deployment's.
  return counts.reduce((a, b) => a + b, 0);
}

/** Bytes of every partition's `.log` segments (not the preallocated index files). */
function kafkaLogBytes(dir: string | undefined): number {
  if (dir === undefined) return 0;
  let total = 0;
  for (const part of readdirSync(dir, { withFileTypes: true })) {
    if (!part.isDirectory() || part.name.startsWith('__cluster_metadata')) continue;
    for (const f of readdirSync(resolve(dir, part.name))) {
      if (f.endsWith('.log')) total += statSync(resolve(dir, part.name, f)).size;
    }
  }
  return total;
}

export async function readFootprint(s: FootprintSources): Promise<Footprint> {
  const { rows } = await s.pool.query<{ wal: string; writes: string | null }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal,
            (SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) FROM pg_stat_all_tables WHERE schemaname = $1)::text AS writes`,
    [s.schema],
  );
  return {
    redisCommands: await redisCommands(s.redisNodes),
    walBytes: Number(rows[0]?.wal ?? NaN),
    rowWrites: Number(rows[0]?.writes ?? 0),
    kafkaBytes: kafkaLogBytes(s.kafkaLogDir),
  };
}

/** after − before, per job. */
export function perJob(before: Footprint, after: Footprint, jobs: number): Footprint {
  return {
    redisCommands: (after.redisCommands - before.redisCommands) / jobs,
    walBytes: (after.walBytes - before.walBytes) / jobs,
    rowWrites: (after.rowWrites - before.rowWrites) / jobs,
    kafkaBytes: (after.kafkaBytes - before.kafkaBytes) / jobs,
  };
}
