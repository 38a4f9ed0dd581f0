import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';
import type { Job } from '@kairos/core';

type Queryable = Pick<pg.PoolClient, 'query'>;

export interface ClaimCandidate {
  readonly jobId: string;
  readonly dueAt: Date;
  readonly version: number;
}

/**
 * Holds the partition's epoch row for the rest of the transaction (FOR SHARE) and says whether
 * `epoch` is still the current one. A new owner's takePartitionEpoch waits for this transaction,
 * so a dispatch tagged with an epoch can never commit after that epoch was superseded.
 */
export async function holdPartitionEpoch(db: Queryable, partition: number, epoch: number): Promise<boolean> {
  const r = await db.query<{ epoch: string }>(
    'SELECT epoch FROM partition_epochs WHERE partition = $1 FOR SHARE',
    [partition],
  );
  return r.rows[0] !== undefined && Number(r.rows[0].epoch) === epoch;
}

/** A job claimed for dispatch; runs of a schedule name it (their overlap policy applies next). */
export interface ClaimedJob {
  readonly id: string;
  readonly scheduleId: string | null;
  readonly fence: number;
  readonly attempt: number;
}

/**
 * Claims popped jobs for dispatch inside the caller's transaction: only a job still SCHEDULED at
 * the popped version becomes QUEUED. A cancel or reschedule committed first changed the version
 * or state, so its job is not claimed; one that comes later waits on the row lock and then finds
 * the job QUEUED. Rows are locked in id order, the order the tracker locks them in, so the two
 * cannot deadlock. Returns the ids claimed.
 */
export async function claimForDispatch(
  db: Queryable,
  jobs: readonly ClaimCandidate[],
  dispatchedAt: Date,
): Promise<Set<string>> {
  return new Set((await claimJobsForDispatch(db, jobs, dispatchedAt)).map((c) => c.id));
}

/**
 * claimForDispatch, saying which claimed jobs run an occurrence of a schedule. A run that missed
 * its time by more than its schedule's tolerance (misfire_after passed) and that the misfire
 * policy has not decided on yet is not claimed: the generator decides on every late run of the
 * schedule at once, and releases those the policy keeps.
 */
export async function claimJobsForDispatch(
  db: Queryable,
  jobs: readonly ClaimCandidate[],
  dispatchedAt: Date,
): Promise<ClaimedJob[]> {
  if (jobs.length === 0) return [];
  const r = await db.query<{ id: string; schedule_id: string | null; fence: string; attempt: number }>(
    `WITH c AS (
       SELECT j.id, j.due_at FROM jobs j
       JOIN unnest($1::uuid[], $2::timestamptz[], $3::int[]) AS p(id, due_at, version)
         ON j.id = p.id AND j.due_at = p.due_at AND j.version = p.version
       WHERE j.state = 'SCHEDULED' AND (j.misfire_after IS NULL OR j.misfire_after >= $4 OR j.attempt > 1)
       ORDER BY j.id
       FOR UPDATE OF j
     )
     UPDATE jobs j SET state = 'QUEUED', dispatched_at = $4, updated_at = now()
     FROM c WHERE j.id = c.id AND j.due_at = c.due_at
     RETURNING j.id, j.schedule_id, j.fence, j.attempt`,
    [jobs.map((j) => j.jobId), jobs.map((j) => j.dueAt), jobs.map((j) => j.version), dispatchedAt],
  );
  return r.rows.map((row) => ({
    id: row.id,
    scheduleId: row.schedule_id,
    fence: Number(row.fence),
    attempt: row.attempt,
  }));
}

/**
 * Records the attempts just dispatched (QUEUED), in the claim's transaction: the attempt's row
 * exists from its dispatch on, so a job's attempts are complete even for one cancelled or lost
 * before it ran, and the tracker need not read the task topics to learn of dispatches.
 */
export async function recordDispatchedAttempts(
  db: Queryable,
  jobs: readonly { readonly jobId: string; readonly fence: number; readonly attempt: number }[],
  epoch: number,
  dispatchedAt: Date,
): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `INSERT INTO attempts (job_id, fence, attempt, epoch, dispatched_at)
     SELECT job_id, fence, attempt, $4, $5 FROM unnest($1::uuid[], $2::bigint[], $3::int[]) AS a(job_id, fence, attempt)
     ON CONFLICT (job_id, fence) DO UPDATE
       SET dispatched_at = LEAST(attempts.dispatched_at, EXCLUDED.dispatched_at)`,
    [jobs.map((j) => j.jobId), jobs.map((j) => j.fence), jobs.map((j) => j.attempt), epoch, dispatchedAt],
  );
}

/**
 * PostgreSQL-only scheduling (Redis refused writes): the shard's SCHEDULED jobs due by `until`,
 * oldest first, locked for the caller's transaction; the (shard, due_at) partial index serves it.
 * Runs waiting for their schedule's misfire decision at `now` are left alone (claimJobsForDispatch).
 */
export async function lockDueJobs(
  db: Queryable,
  shard: number,
  until: Date,
  limit: number,
  now: Date = until,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `SELECT * FROM jobs WHERE shard = $1 AND state = 'SCHEDULED' AND due_at <= $2
       AND (misfire_after IS NULL OR misfire_after >= $4 OR attempt > 1)
     ORDER BY due_at, id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [shard, until, limit, now],
  );
  return r.rows.map(toJob);
}

/** Marks jobs locked by lockDueJobs QUEUED (after Kafka acknowledged their dispatch). */
export async function markQueued(
  db: Queryable,
  jobs: readonly { jobId: string; dueAt: Date }[],
  dispatchedAt: Date,
): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `UPDATE jobs j SET state = 'QUEUED', dispatched_at = $3, updated_at = now()
     FROM unnest($1::uuid[], $2::timestamptz[]) AS q(id, due_at)
     WHERE j.id = q.id AND j.due_at = q.due_at AND j.state = 'SCHEDULED'`,
    [jobs.map((j) => j.jobId), jobs.map((j) => j.dueAt), dispatchedAt],
  );
}
