import pg from 'pg';
import { outboxTransactionBegins, outboxTransactionEnds } from './outbox-relay.js';

export interface PoolOptions {
  /** postgres:// URL. Required. */
  readonly connectionString: string;
  /** Schema holding Kairos's tables; every connection uses it as search_path. Default: public. */
  readonly schema?: string;
  /** Most connections. Default: 10. */
  readonly max?: number;
  /**
   * Connections kept open however long they idle (the others close after 10 s idle), so a request
   * after a quiet spell does not pay for a new one: connect, authenticate, and a fresh backend
   * whose first statements plan on cold catalog caches (~10 ms in all). Default: 0.
   */
  readonly min?: number;
  /** Name shown in pg_stat_activity. Default: kairos. */
  readonly applicationName?: string;
  /**
   * A transaction left idle this long is ended by the server, so a stuck client can never hold
   * locks (or block logical slot creation) indefinitely. Default: 60,000 ms.
   */
  readonly idleInTransactionTimeoutMs?: number;
  /** Longest statement before the server cancels it, ms. Default: 30,000. */
  readonly statementTimeoutMs?: number;
  /** Waiting for a connection longer than this fails instead of hanging, ms. Default: 5,000. */
  readonly connectionTimeoutMs?: number;
  /** Told about errors of idle connections (e.g. the server restarted). Default: ignored. */
  readonly onIdleError?: (err: Error) => void;
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

// Timestamps travel as ISO strings and bigint fences as numbers (they stay far below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPool(options: PoolOptions): pg.Pool {
  const schema = options.schema ?? 'public';
  if (!IDENT.test(schema)) throw new RangeError(`schema "${schema}" must match ${IDENT.source}`);
  const max = options.max ?? 10;
  const min = options.min ?? 0;
  if (!Number.isInteger(min) || min < 0 || min > max) {
    throw new RangeError(`min must be an integer from 0 to max (${max}), got ${min}`);
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max,
    min,
    application_name: options.applicationName ?? 'kairos',
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    options: [
      `-c search_path=${schema}`,
      `-c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs ?? 60_000}`,
      `-c statement_timeout=${options.statementTimeoutMs ?? 30_000}`,
    ].join(' '),
  });
  // Without a listener, an idle connection dropped by a server restart crashes the process.
  pool.on('error', (err) => options.onIdleError?.(err));
  return pool;
}

/**
 * Runs fn in one transaction: COMMIT on success, ROLLBACK on any error. Outbox rows it wrote go
 * to the pool's publisher once committed (see publishOutboxAfterCommit).
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // The server may end a checked-out connection between two queries (a shutdown, a restart):
  // node-postgres then emits 'error' on the client, an uncaught exception without a listener. The
  // failure also reaches the transaction's next query; here it only marks the connection lost.
  let lost: Error | undefined;
  const onError = (err: Error) => (lost = err);
  client.on('error', onError);
  outboxTransactionBegins(pool, client);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    outboxTransactionEnds(pool, client, true);
    client.removeListener('error', onError);
    client.release(lost);
    return result;
  } catch (err) {
    outboxTransactionEnds(pool, client, false);
    const broken =
      lost !== undefined ||
      (await client.query('ROLLBACK').then(
        () => false,
        () => true,
      ));
    client.removeListener('error', onError);
    // A connection that is lost or cannot even roll back is discarded, not returned to the pool.
    client.release(broken ? (err as Error) : undefined);
    throw err;
  }
}

export type { Pool, PoolClient } from 'pg';
