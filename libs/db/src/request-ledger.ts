import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** A command already applied under a (tenant, idempotency key). */
export interface LedgerEntry {
  readonly command: string;
  readonly jobId: string;
}

/** The command that holds a request key, if any (a read outside any transaction, to answer early). */
export async function findRequestKey(
  db: Queryable,
  tenantId: string,
  key: string,
): Promise<LedgerEntry | undefined> {
  const r = await db.query<{ command: string; job_id: string }>(
    'SELECT command, job_id FROM request_ledger WHERE tenant_id = $1 AND idempotency_key = $2',
    [tenantId, key],
  );
  const row = r.rows[0];
  return row && { command: row.command, jobId: row.job_id };
}

/**
 * Claims a request key for a command on a job, inside the command's transaction. Returns undefined
 * when this call claimed it (the command goes ahead; a rollback releases the key), or the entry
 * that already held it. A concurrent claim of the same key waits for the first transaction and
 * then finds its entry, so two copies of one request never both apply.
 */
export async function claimRequestKey(
  db: Queryable,
  tenantId: string,
  key: string,
  command: string,
  jobId: string,
): Promise<LedgerEntry | undefined> {
  const inserted = await db.query(
    `INSERT INTO request_ledger (tenant_id, idempotency_key, command, job_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [tenantId, key, command, jobId],
  );
  if (inserted.rowCount === 1) return undefined;
  const held = await findRequestKey(db, tenantId, key);
  if (!held) throw new Error(`request key ${tenantId}/${key} conflicted but has no entry`);
  return held;
}
