import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type pg from 'pg';

const MIGRATIONS_DIR = resolve(import.meta.dirname, '..', 'migrations');
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => {
      const m = FILE.exec(f);
      if (!m?.[1] || !m[2]) throw new Error(`migration file ${f} must be named NNNN_name.sql`);
      const sql = readFileSync(resolve(dir, f), 'utf8');
      return { id: Number(m[1]), name: m[2], sql, checksum: createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.id - b.id);
  migrations.forEach((m, i) => {
    if (m.id !== i + 1)
      throw new Error(`migrations must be numbered 1, 2, 3…; found ${m.id} at position ${i + 1}`);
  });
  return migrations;
}

/**
 * Applies pending migrations in order, each in its own transaction, recorded in the
 * `kairos_migrations` ledger. A session advisory lock makes concurrent migrators wait for each
 * other; an applied migration whose file changed is an error (released migrations are never
 * edited). Returns the ids applied now.
 */
export async function migrate(pool: pg.Pool, migrations = loadMigrations()): Promise<number[]> {
  const client = await pool.connect();
  try {
    const schema = (await client.query<{ s: string }>('SELECT current_schema() AS s')).rows[0]?.s;
    if (!schema) throw new Error('no current schema: does the search_path schema exist?');
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`kairos-migrations:${schema}`]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS kairos_migrations (
        id integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const applied = new Map(
        (
          await client.query<{ id: number; checksum: string }>('SELECT id, checksum FROM kairos_migrations')
        ).rows.map((r) => [r.id, r.checksum]),
      );
      const done: number[] = [];
      for (const m of migrations) {
        const checksum = applied.get(m.id);
        if (checksum !== undefined) {
          if (checksum !== m.checksum) {
            throw new Error(
              `migration ${m.id}_${m.name} was edited after it was applied; add a new migration instead`,
            );
          }
          continue;
        }
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO kairos_migrations (id, name, checksum) VALUES ($1, $2, $3)', [
            m.id,
            m.name,
            m.checksum,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${m.id}_${m.name} failed: ${(err as Error).message}`, { cause: err });
        }
        done.push(m.id);
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`kairos-migrations:${schema}`]);
    }
  } finally {
    client.release();
  }
}

/** Makes sure monthly job partitions exist from last month through `monthsAhead` months. */
export async function ensureJobPartitions(pool: pg.Pool, now: Date, monthsAhead = 12): Promise<void> {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  await pool.query('SELECT kairos_ensure_job_partitions($1::date, $2)', [
    from.toISOString().slice(0, 10),
    monthsAhead + 2,
  ]);
}
