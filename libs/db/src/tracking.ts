import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** One statement may touch an attempt row only once: duplicates (redeliveries) collapse to the last. */
function lastPerAttempt<T extends { jobId: string; fence: number }>(records: readonly T[]): T[] {
  return [...new Map(records.map((r) => [`${r.jobId}/${r.fence}`, r])).values()];
}

export interface DispatchRecord {
  readonly jobId: string;
  readonly dueAt: Date;
  readonly fence: number;
  readonly attempt: number;
  readonly epoch: number;
  readonly dispatchedAt: Date;
}

export interface ResultRecord {
  readonly jobId: string;
  readonly dueAt: Date;
  readonly fence: number;
  readonly attempt: number;
  readonly epoch: number;
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  readonly errorClass: string | null;
  readonly errorMessage: string | null;
  readonly workerId: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
}

/**
 * Locks the jobs a tracker batch will touch, in id order. Batches of different partitions run in
 * parallel transactions; without one lock order a dispatch batch and a result batch for the same
 * jobs could deadlock.
 */
export async function lockJobs(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query('SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [[...new Set(ids)]]);
}

/**
 * Records dispatches in one round trip per batch. Only a SCHEDULED job becomes QUEUED, so a
 * dispatch seen after its result (they travel on different topics) never moves a job backwards.
 */
export async function recordDispatches(db: Queryable, records: readonly DispatchRecord[]): Promise<void> {
  if (records.length === 0) return;
  const batch = lastPerAttempt(records);
  const params = [
    batch.map((d) => d.jobId),
    batch.map((d) => d.dueAt),
    batch.map((d) => d.fence),
    batch.map((d) => d.attempt),
    batch.map((d) => d.epoch),
    batch.map((d) => d.dispatchedAt),
  ];
  const rows = `unnest($1::uuid[], $2::timestamptz[], $3::bigint[], $4::int[], $5::bigint[], $6::timestamptz[])
                AS d(job_id, due_at, fence, attempt, epoch, dispatched_at)`;
  await db.query(
    `UPDATE jobs j SET state = CASE WHEN j.state = 'SCHEDULED' THEN 'QUEUED' ELSE j.state END,
                       -- A result seen first set a provisional time (its start): the dispatch's own wins.
                       dispatched_at = LEAST(j.dispatched_at, d.dispatched_at), updated_at = now()
     FROM ${rows}
     WHERE j.id = d.job_id AND j.due_at = d.due_at AND j.fence <= d.fence
       -- The dispatcher usually marked it QUEUED already: then the row is not rewritten.
       AND (j.state = 'SCHEDULED' OR j.dispatched_at IS NULL OR j.dispatched_at > d.dispatched_at)`,
    params,
  );
  await db.query(
    `INSERT INTO attempts (job_id, fence, attempt, epoch, dispatched_at)
     SELECT job_id, fence, attempt, epoch, dispatched_at FROM ${rows}
     ON CONFLICT (job_id, fence) DO UPDATE
       SET dispatched_at = LEAST(attempts.dispatched_at, EXCLUDED.dispatched_at)`,
    params,
  );
}

/**
 * Applies attempt results, fenced: a result whose fence is not the job's current fence, or that
 * arrives after the job reached a terminal state, changes no job row. Returns how many job rows
 * changed.
 */
export async function recordResults(db: Queryable, records: readonly ResultRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const batch = lastPerAttempt(records);
  const params = [
    batch.map((r) => r.jobId),
    batch.map((r) => r.dueAt),
    batch.map((r) => r.fence),
    batch.map((r) => r.attempt),
    batch.map((r) => r.epoch),
    batch.map((r) => r.outcome),
    batch.map((r) => r.errorClass),
    batch.map((r) => r.errorMessage),
    batch.map((r) => r.workerId),
    batch.map((r) => r.startedAt),
    batch.map((r) => r.finishedAt),
  ];
  const rows = `unnest($1::uuid[], $2::timestamptz[], $3::bigint[], $4::int[], $5::bigint[], $6::text[], $7::text[],
                       $8::text[], $9::text[], $10::timestamptz[], $11::timestamptz[])
                AS r(job_id, due_at, fence, attempt, epoch, outcome, error_class, error_message, worker_id,
                     started_at, finished_at)`;
  const updated = await db.query(
    `UPDATE jobs j SET state = r.outcome, started_at = r.started_at, finished_at = r.finished_at,
                       last_error = r.error_message, updated_at = now(),
                       dispatched_at = COALESCE(j.dispatched_at, r.started_at)
     FROM ${rows}
     WHERE j.id = r.job_id AND j.due_at = r.due_at AND j.fence = r.fence
       AND j.state IN ('SCHEDULED', 'QUEUED', 'RUNNING')`,
    params,
  );
  await db.query(
    `INSERT INTO attempts (job_id, fence, attempt, epoch, worker_id, outcome, error_class, error_message,
                           started_at, finished_at)
     SELECT job_id, fence, attempt, epoch, worker_id, outcome, error_class, error_message, started_at, finished_at
     FROM ${rows}
     ON CONFLICT (job_id, fence) DO UPDATE
       SET worker_id = EXCLUDED.worker_id, outcome = EXCLUDED.outcome, error_class = EXCLUDED.error_class,
           error_message = EXCLUDED.error_message, started_at = EXCLUDED.started_at,
           finished_at = EXCLUDED.finished_at`,
    params,
  );
  return updated.rowCount ?? 0;
}

/**
 * Marks jobs EXPIRED whose deadline passed before they could be dispatched. Only a SCHEDULED job
 * expires: one already queued, running or finished keeps its state. Returns the ids that expired.
 */
export async function expireJobs(
  db: Queryable,
  jobs: readonly { jobId: string; dueAt: Date; deadlineAt: Date }[],
): Promise<string[]> {
  if (jobs.length === 0) return [];
  const r = await db.query<{ id: string }>(
    `UPDATE jobs j SET state = 'EXPIRED', finished_at = now(), updated_at = now(),
                       last_error = 'deadline ' || to_char(e.deadline_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ' passed before dispatch'
     FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS e(job_id, due_at, deadline_at)
     WHERE j.id = e.job_id AND j.due_at = e.due_at AND j.state = 'SCHEDULED'
     RETURNING j.id`,
    [jobs.map((j) => j.jobId), jobs.map((j) => j.dueAt), jobs.map((j) => j.deadlineAt)],
  );
  return r.rows.map((row) => row.id);
}
