import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, onTestFinished, test } from 'vitest';
import {
  createPool,
  ensureJobPartitions,
  loadMigrations,
  migrate,
  type Migration,
  type Pool,
} from '@kairos/db';
import { useNamespace, type Namespace } from '../support/namespace.js';

/** A pool on the namespace's schema; not tracked by the namespace, so ended here after the test. */
function poolFor(ns: Namespace, schema = ns.schema): Pool {
  const pool = createPool({ connectionString: ns.services.pgUrl, schema, max: 2 });
  onTestFinished(() => pool.end());
  return pool;
}

async function ledger(pool: Pool): Promise<{ id: number; name: string; checksum: string }[]> {
  const r = await pool.query<{ id: number; name: string; checksum: string }>(
    'SELECT id, name, checksum FROM kairos_migrations ORDER BY id',
  );
  return r.rows;
}

/** A temporary migrations folder holding the given files; removed after the test. */
function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-migrations-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

test('five concurrent migrators: all succeed, exactly one applies each migration, a rerun applies nothing', async () => {
  const ns = await useNamespace('migrations');
  const files = loadMigrations();
  expect(files.length).toBeGreaterThan(0);
  const pools = Array.from({ length: 5 }, () => poolFor(ns));

  const results = await Promise.all(pools.map((pool) => migrate(pool)));
  const appliers = results.filter((applied) => applied.includes(1));
  expect(appliers).toHaveLength(1);
  expect(appliers[0]).toEqual(files.map((m) => m.id));
  // Everyone else waited on the lock and then found nothing left to do.
  expect(results.flat().sort((a, b) => a - b)).toEqual(files.map((m) => m.id));

  const [pool] = pools;
  expect(await ledger(pool!)).toEqual(files.map((m) => ({ id: m.id, name: m.name, checksum: m.checksum })));
  // The tables live in the namespace's schema, not in public.
  const where = await pool!.query<{ schema: string }>(
    `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'kairos_migrations'
       AND table_schema = $1`,
    [ns.schema],
  );
  expect(where.rows).toEqual([{ schema: ns.schema }]);
  const jobs = await pool!.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [
    `${ns.schema}.jobs`,
  ]);
  expect(jobs.rows[0]?.exists).toBe(true);

  // A second run, on a fresh pool, applies nothing and leaves the ledger as it was.
  const again = poolFor(ns);
  expect(await migrate(again)).toEqual([]);
  expect(await Promise.all(pools.map((p) => migrate(p)))).toEqual(pools.map(() => []));
  expect(await ledger(again)).toHaveLength(files.length);
});

test('an applied migration whose file was edited stops migrate with an error, and releases the lock', async () => {
  const ns = await useNamespace('migrations-edited');
  const pool = poolFor(ns);
  await migrate(pool);
  const before = await ledger(pool);
  await pool.query(`UPDATE kairos_migrations SET checksum = 'x' WHERE id = 1`);

  await expect(migrate(pool)).rejects.toThrow(/edited/);
  // Nothing was applied or rewritten.
  expect((await ledger(pool)).map((r) => r.checksum)).toEqual([
    'x',
    ...before.slice(1).map((r) => r.checksum),
  ]);

  // The failed run released the advisory lock: another session can migrate at once.
  await pool.query('UPDATE kairos_migrations SET checksum = $1 WHERE id = 1', [before[0]?.checksum]);
  const other = poolFor(ns);
  const run = migrate(other);
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('migrate still waiting on the lock after 10 s')), 10_000).unref(),
  );
  expect(await Promise.race([run, timeout])).toEqual([]);
});

test('a failing migration is rolled back and not recorded; earlier ones stay applied', async () => {
  const ns = await useNamespace('migrations-failing');
  const pool = poolFor(ns);
  const m = (id: number, name: string, sql: string): Migration => ({
    id,
    name,
    sql,
    checksum: createHash('sha256').update(sql).digest('hex'),
  });
  const good = m(1, 'good', 'CREATE TABLE good (id int)');
  const bad = m(2, 'bad', 'CREATE TABLE half (id int); SELECT no_such_function()');

  await expect(migrate(pool, [good, bad])).rejects.toThrow(/2_bad failed/);
  expect((await ledger(pool)).map((r) => r.id)).toEqual([1]);
  const tables = await pool.query<{ good: boolean; half: boolean }>(
    'SELECT to_regclass($1) IS NOT NULL AS good, to_regclass($2) IS NOT NULL AS half',
    [`${ns.schema}.good`, `${ns.schema}.half`],
  );
  expect(tables.rows[0]).toEqual({ good: true, half: false });

  // Fixed (a migration that never applied may still change): the next run applies only it.
  const fixed = m(2, 'bad', 'CREATE TABLE half (id int)');
  expect(await migrate(pool, [good, fixed])).toEqual([2]);
});

test('migrate into a schema that does not exist fails clearly', async () => {
  const ns = await useNamespace('migrations-no-schema');
  const pool = poolFor(ns, `${ns.schema}_missing`);
  await expect(migrate(pool)).rejects.toThrow(/schema/);
});

test('loadMigrations: ordered with checksums; a gap, a duplicate number or a bad file name throws', () => {
  const ok = loadMigrations(
    migrationsDir({
      '0002_second.sql': 'SELECT 2;',
      '0001_first.sql': 'SELECT 1;',
      'README.md': 'not a migration',
    }),
  );
  expect(ok).toEqual([
    {
      id: 1,
      name: 'first',
      sql: 'SELECT 1;',
      checksum: createHash('sha256').update('SELECT 1;').digest('hex'),
    },
    {
      id: 2,
      name: 'second',
      sql: 'SELECT 2;',
      checksum: createHash('sha256').update('SELECT 2;').digest('hex'),
    },
  ]);

  const gap = migrationsDir({ '0001_first.sql': 'SELECT 1;', '0003_third.sql': 'SELECT 3;' });
  expect(() => loadMigrations(gap)).toThrow(/found 3 at position 2/);

  const startsAtTwo = migrationsDir({ '0002_second.sql': 'SELECT 2;' });
  expect(() => loadMigrations(startsAtTwo)).toThrow(/numbered/);

  const duplicate = migrationsDir({ '0001_a.sql': 'SELECT 1;', '0001_b.sql': 'SELECT 1;' });
  expect(() => loadMigrations(duplicate)).toThrow(/numbered/);

  for (const bad of ['1_short.sql', '0002-dash.sql', '0002_Upper.sql', '0002_.sql', 'V2__flyway.sql']) {
    const dir = migrationsDir({ '0001_first.sql': 'SELECT 1;', [bad]: 'SELECT 2;' });
    expect(() => loadMigrations(dir), bad).toThrow(`migration file ${bad} must be named NNNN_name.sql`);
  }
});

test('a month whose jobs already sit in the default partition can still get its partition', async () => {
  const ns = await useNamespace('migrations-partitions');
  const pool = poolFor(ns);
  await migrate(pool);
  await ensureJobPartitions(pool, new Date('2026-11-15T00:00:00Z'), 1);
  // Due three years out: no monthly partition yet, so the row lands in jobs_default.
  await pool.query(
    `INSERT INTO jobs (id, tenant_id, type, resource_class, payload, due_at, state, max_attempts, routing_key, shard)
     VALUES ('01a22700-0000-7000-8000-000000000001', 'acme', 't', 'default', '{}', '2029-11-20T10:00:00Z', 'SCHEDULED', 3, 'k', 0)`,
  );
  const where = async () =>
    (
      await pool.query<{ part: string }>(
        `SELECT tableoid::regclass::text AS part FROM jobs WHERE id = '01a22700-0000-7000-8000-000000000001'`,
      )
    ).rows[0]?.part;
  expect(await where()).toMatch(/jobs_default$/);
  // Later the horizon reaches that month: the partition is created and the row moves into it.
  await ensureJobPartitions(pool, new Date('2029-11-01T00:00:00Z'), 1);
  expect(await where()).toMatch(/jobs_2029_11$/);
  const count = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
  expect(count.rows[0]?.n).toBe(1);
});
