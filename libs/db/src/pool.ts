import pg from 'pg';

export interface PoolOptions {
  /** postgres:// URL. Required. */
  readonly connectionString: string;
  /** Schema holding Kairos's tables; every connection uses it as search_path. Default: public. */
  readonly schema?: string;
  /** Most connections. Default: 10. */
  readonly max?: number;
  /** Name shown in pg_stat_activity. Default: kairos. */
  readonly applicationName?: string;
  /**
   * A transaction left idle this long is ended by the server, so a stuck client can never hold
   * locks (or block logical slot creation) indefinitely. Default: 60,000 ms.
   */
  readonly idleInTransactionTimeoutMs?: number;
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

// Timestamps travel as ISO strings and bigint fences as numbers (they stay far below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPool(options: PoolOptions): pg.Pool {
  const schema = options.schema ?? 'public';
  if (!IDENT.test(schema)) throw new RangeError(`schema "${schema}" must match ${IDENT.source}`);
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'kairos',
    options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs ?? 60_000}`,
  });
}

/** Runs fn in one transaction: COMMIT on success, ROLLBACK on any error. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export type { Pool, PoolClient } from 'pg';
