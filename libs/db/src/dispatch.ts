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
  /** The fence of the attempt dispatched (its attempts row was written by the claim). */
  readonly fence: number;
}

/**
 * The attempts row of every job a statement's `u` CTE (id, fence, attempt) marked QUEUED: an
 * attempt is recorded from its dispatch on, in the same statement, so the tracker need not read
 * the task topics to learn of dispatches. A finished attempt row is never touched (a dispatch at
 * a fence whose attempt already has an outcome must not rewrite its history).
 */
const RECORD_ATTEMPTS = (epochParam: string, atParam: string, from = 'u') => `
     a AS (
       INSERT INTO attempts (job_id, fence, attempt, epoch, dispatched_at)
       SELECT id, fence, attempt, ${epochParam}, ${atParam} FROM ${from}
       ON CONFLICT (job_id, fence) DO UPDATE
         SET dispatched_at = LEAST(attempts.dispatched_at, EXCLUDED.dispatched_at)
         WHERE attempts.outcome IS NULL
     )`;

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
  epoch: number,
): Promise<Set<string>> {
  return new Set((await claimJobsForDispatch(db, jobs, dispatchedAt, epoch)).map((c) => c.id));
}

/** The claim of the popped jobs `p` (id, due_at, version, ...), those `gate` lets through. */
const CLAIM = (candidates: string, gate: string) => `
     c AS (
       SELECT j.id, j.due_at FROM jobs j
       JOIN ${candidates} ON j.id = p.id AND j.due_at = p.due_at AND j.version = p.version
       WHERE j.state = 'SCHEDULED' AND (j.misfire_after IS NULL OR j.misfire_after >= $4 OR j.attempt > 1)
         ${gate}
       ORDER BY j.id
       FOR UPDATE OF j
     ),
     u AS (
       UPDATE jobs j SET state = 'QUEUED', dispatched_at = $4, updated_at = now()
       FROM c WHERE j.id = c.id AND j.due_at = c.due_at
       RETURNING j.id, j.schedule_id, j.fence, j.attempt, j.shard
     )`;

type ClaimRow = { id: string | null; schedule_id: string | null; fence: string | null };

const claimed = (rows: readonly ClaimRow[]): ClaimedJob[] =>
  rows.flatMap((row) =>
    row.id === null ? [] : [{ id: row.id, scheduleId: row.schedule_id, fence: Number(row.fence) }],
  );

const candidateParams = (jobs: readonly ClaimCandidate[]) => [
  jobs.map((j) => j.jobId),
  jobs.map((j) => j.dueAt),
  jobs.map((j) => j.version),
];

/**
 * claimForDispatch, saying which claimed jobs run an occurrence of a schedule. A run that missed
 * its time by more than its schedule's tolerance (misfire_after passed) and that the misfire
 * policy has not decided on yet is not claimed: the generator decides on every late run of the
 * schedule at once, and releases those the policy keeps. Each claimed attempt's row is written
 * in the same statement (a run the overlap gate then withholds is forgotten again).
 */
export async function claimJobsForDispatch(
  db: Queryable,
  jobs: readonly ClaimCandidate[],
  dispatchedAt: Date,
  epoch: number,
): Promise<ClaimedJob[]> {
  if (jobs.length === 0) return [];
  const r = await db.query<ClaimRow>(
    `WITH ${CLAIM('unnest($1::uuid[], $2::timestamptz[], $3::int[]) AS p(id, due_at, version)', '')},
     ${RECORD_ATTEMPTS('$5', '$4')}
     SELECT id, schedule_id, fence FROM u`,
    [...candidateParams(jobs), dispatchedAt, epoch],
  );
  return claimed(r.rows);
}

/** A partition's owner as a dispatch knows it: the epoch it popped under. */
export interface PartitionOwnership {
  readonly partition: number;
  readonly epoch: number;
}

/** A popped job and the partition (its shard) it was popped from. */
export interface PartitionClaimCandidate extends ClaimCandidate {
  readonly partition: number;
}

export interface OwnersClaim {
  /** Partitions whose epoch was still the current one (the others claimed nothing). */
  readonly current: ReadonlySet<number>;
  readonly claimed: ClaimedJob[];
}

/**
 * The dispatch claim of one round, for every partition at once (one statement, one round trip):
 * holds each partition's epoch row (FOR SHARE, in partition order) while its epoch is the one
 * popped under, and claims, version-checked as claimJobsForDispatch, only the jobs of those
 * partitions; each attempt's row records its partition's epoch. A new owner's takePartitionEpoch
 * waits for the transaction, so no job is claimed under a superseded epoch.
 */
export async function claimJobsAsOwners(
  db: Queryable,
  owners: readonly PartitionOwnership[],
  jobs: readonly PartitionClaimCandidate[],
  dispatchedAt: Date,
): Promise<OwnersClaim> {
  const r = await db.query<ClaimRow & { partition: number }>({
    // Prepared once per connection: planning it over every monthly partition of jobs took
    // 3-6 ms, executing it 0.5.
    name: 'kairos-claim-as-owners',
    text: `WITH o AS (SELECT * FROM unnest($5::int[], $6::bigint[]) AS o(partition, epoch)),
     e AS (
       SELECT pe.partition FROM partition_epochs pe JOIN o ON pe.partition = o.partition AND pe.epoch = o.epoch
       ORDER BY pe.partition FOR SHARE OF pe
     ),
     ${CLAIM(
       'unnest($1::uuid[], $2::timestamptz[], $3::int[], $7::int[]) AS p(id, due_at, version, partition)',
       'AND j.shard = p.partition AND p.partition IN (SELECT partition FROM e)',
     )},
     ${RECORD_ATTEMPTS('o.epoch', '$4', 'u JOIN o ON o.partition = u.shard')}
     SELECT e.partition, u.id, u.schedule_id, u.fence FROM e LEFT JOIN u ON u.shard = e.partition`,
    values: [
      ...candidateParams(jobs),
      dispatchedAt,
      owners.map((o) => o.partition),
      owners.map((o) => o.epoch),
      jobs.map((j) => j.partition),
    ],
  });
  return { current: new Set(r.rows.map((row) => Number(row.partition))), claimed: claimed(r.rows) };
}

/**
 * Forgets the attempts rows the claim wrote for runs the overlap gate then withheld (not
 * dispatched after all), in the claim's transaction.
 */
export async function forgetDispatchedAttempts(
  db: Queryable,
  jobs: readonly { readonly id: string; readonly fence: number }[],
): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `DELETE FROM attempts a USING unnest($1::uuid[], $2::bigint[]) AS w(job_id, fence)
     WHERE a.job_id = w.job_id AND a.fence = w.fence AND a.started_at IS NULL AND a.outcome IS NULL`,
    [jobs.map((j) => j.id), jobs.map((j) => j.fence)],
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

/**
 * Marks jobs locked by lockDueJobs QUEUED (after Kafka acknowledged their dispatch) and writes
 * their attempts rows, in one statement.
 */
export async function markQueued(
  db: Queryable,
  jobs: readonly { jobId: string; dueAt: Date }[],
  dispatchedAt: Date,
  epoch: number,
): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `WITH u AS (
       UPDATE jobs j SET state = 'QUEUED', dispatched_at = $3, updated_at = now()
       FROM unnest($1::uuid[], $2::timestamptz[]) AS q(id, due_at)
       WHERE j.id = q.id AND j.due_at = q.due_at AND j.state = 'SCHEDULED'
       RETURNING j.id, j.fence, j.attempt
     ),${RECORD_ATTEMPTS('$4', '$3')}
     SELECT count(*) FROM u`,
    [jobs.map((j) => j.jobId), jobs.map((j) => j.dueAt), dispatchedAt, epoch],
  );
}

/**
 * The attempts of a shard dispatched and not started (QUEUED, with their fence): what a worker
 * may still claim, written back to Redis after it lost the partition's state. From the live-jobs
 * index (0011): as many rows as are in flight, never the history.
 */
export async function queuedAttempts(
  db: Queryable,
  shard: number,
): Promise<{ jobId: string; fence: number }[]> {
  const r = await db.query<{ id: string; fence: string }>(
    `SELECT id, fence FROM jobs WHERE state = 'QUEUED' AND shard = $1`,
    [shard],
  );
  return r.rows.map((row) => ({ jobId: row.id, fence: Number(row.fence) }));
}
