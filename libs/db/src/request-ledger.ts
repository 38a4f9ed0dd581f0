import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * A command already applied under a (tenant, idempotency key), and what it concerned: a job
 * (cancel, reschedule), a schedule (update, pause, resume, delete), or both (a trigger's run).
 */
export interface LedgerEntry {
  readonly command: string;
  readonly jobId: string | null;
  readonly scheduleId: string | null;
}

/** What a command concerns, as recorded with its key (at least one of the two). */
export interface LedgerTarget {
  readonly jobId?: string | null;
  readonly scheduleId?: string | null;
}

/** The command that holds a request key, if any (a read outside any transaction, to answer early). */
export async function findRequestKey(
  db: Queryable,
  tenantId: string,
  key: string,
): Promise<LedgerEntry | undefined> {
  const r = await db.query<{ command: string; job_id: string | null; schedule_id: string | null }>(
    'SELECT command, job_id, schedule_id FROM request_ledger WHERE tenant_id = $1 AND idempotency_key = $2',
    [tenantId, key],
  );
  const row = r.rows[0];
  return row && { command: row.command, jobId: row.job_id, scheduleId: row.schedule_id };
}

/**
 * Claims a request key for a command, inside the command's transaction. Returns undefined when
 * this call claimed it (the command goes ahead; a rollback releases the key), or the entry that
 * already held it. A concurrent claim of the same key waits for the first transaction and then
 * finds its entry, so two copies of one request never both apply.
 */
export async function claimRequestKey(
  db: Queryable,
  tenantId: string,
  key: string,
  command: string,
  target: LedgerTarget,
): Promise<LedgerEntry | undefined> {
  const inserted = await db.query(
    `INSERT INTO request_ledger (tenant_id, idempotency_key, command, job_id, schedule_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [tenantId, key, command, target.jobId ?? null, target.scheduleId ?? null],
  );
  if (inserted.rowCount === 1) return undefined;
  const held = await findRequestKey(db, tenantId, key);
  if (!held) throw new Error(`request key ${tenantId}/${key} conflicted but has no entry`);
  return held;
}

/** Records the job a claimed key's command created (a trigger's run), in the same transaction. */
export async function recordRequestJob(
  db: Queryable,
  tenantId: string,
  key: string,
  jobId: string,
): Promise<void> {
  await db.query('UPDATE request_ledger SET job_id = $3 WHERE tenant_id = $1 AND idempotency_key = $2', [
    tenantId,
    key,
    jobId,
  ]);
}
