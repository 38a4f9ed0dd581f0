import { ZombieWriteSuppressed } from './errors.js';

/** The part of a node-postgres client fencedEffect uses (a `pg.PoolClient` fits). */
export interface EffectClient {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  release(err?: Error | boolean): void;
}

/** The part of a node-postgres pool fencedEffect uses (a `pg.Pool` fits). */
export interface EffectPool {
  connect(): Promise<EffectClient>;
}

/** Which attempt is applying the effect (a handler's TaskContext fits). */
export interface EffectAttempt {
  readonly jobId: string;
  readonly fence: number;
  readonly idempotencyKey: string;
}

export interface FencedEffectOptions {
  /** Table of completion markers (create it with fencedEffectsTableSql). Default: `kairos_fenced_effects`. */
  readonly table?: string;
}

export type FencedEffectResult<T> =
  { readonly applied: true; readonly value: T } | { readonly applied: false };

const DEFAULT_TABLE = 'kairos_fenced_effects';
const IDENT = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

function table(options: FencedEffectOptions): string {
  const t = options.table ?? DEFAULT_TABLE;
  if (!IDENT.test(t)) throw new RangeError(`table must be a plain (schema.)name, got ${t}`);
  return t;
}

/** DDL of the completion-marker table, for your migrations. */
export function fencedEffectsTableSql(options: FencedEffectOptions = {}): string {
  return `CREATE TABLE IF NOT EXISTS ${table(options)} (
  idempotency_key text PRIMARY KEY,
  job_id text NOT NULL,
  fence bigint NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;
}

/**
 * Applies a side effect that lives in your own PostgreSQL exactly once per job (per occurrence of
 * a schedule): the effect and its completion marker commit in one transaction. A duplicate
 * attempt (a redelivery, a retry after an ambiguous failure) finds the marker and changes nothing
 * (`applied: false`); a zombie attempt (its fence is lower than the one that applied the effect)
 * gets ZombieWriteSuppressed and changes nothing. The marker row is locked while the effect runs,
 * so two attempts cannot both apply it.
 */
export async function fencedEffect<T>(
  pool: EffectPool,
  attempt: EffectAttempt,
  effect: (tx: EffectClient) => Promise<T>,
  options: FencedEffectOptions = {},
): Promise<FencedEffectResult<T>> {
  const t = table(options);
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const inserted = await client.query(
      `INSERT INTO ${t} (idempotency_key, job_id, fence) VALUES ($1, $2, $3)
       ON CONFLICT (idempotency_key) DO NOTHING RETURNING fence`,
      [attempt.idempotencyKey, attempt.jobId, attempt.fence],
    );
    if (inserted.rowCount === 0) {
      // Applied before (or being applied: this waits for that transaction's lock on commit).
      const existing = await client.query(`SELECT fence FROM ${t} WHERE idempotency_key = $1 FOR SHARE`, [
        attempt.idempotencyKey,
      ]);
      await client.query('ROLLBACK');
      const fence = Number(existing.rows[0]?.fence ?? 0);
      if (fence > attempt.fence) {
        throw new ZombieWriteSuppressed(attempt.jobId, attempt.fence, `effect applied by fence ${fence}`);
      }
      return { applied: false };
    }
    const value = await effect(client);
    await client.query('COMMIT');
    return { applied: true, value };
  } catch (err) {
    if (!(err instanceof ZombieWriteSuppressed)) {
      await client.query('ROLLBACK').catch((e: unknown) => (broken = e as Error));
    }
    throw err;
  } finally {
    client.release(broken);
  }
}
