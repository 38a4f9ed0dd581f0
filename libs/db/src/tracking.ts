import { UNSTARTED, type Job } from '@kairos/core';
import type pg from 'pg';
import { jobRowColumnsOf, toJob, type JobDbRow } from './jobs.js';
import { AUDIT, LIVE_STATES, REFUSALS_BY_REASON, VERDICT, type Refusals } from './refused-reports.js';

// The tracker's statements are prepared once per connection (named): planning a join of a batch
// with every monthly partition of jobs cost several times more than executing it.

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Sorts `unstarted` reports (UNSTARTED in @kairos/core) before any other report of the attempt. */
const unstartedFirst = (r: { failureClass: string | null }): number => (r.failureClass === UNSTARTED ? 0 : 1);

/** One statement may touch an attempt row only once: duplicates (redeliveries) collapse to the last. */
function lastPerAttempt<T extends { jobId: string; fence: number }>(records: readonly T[]): T[] {
  return [...new Map(records.map((r) => [`${r.jobId}/${r.fence}`, r])).values()];
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
  /** transient | throttled | permanent | ambiguous for a failure; null for a success. */
  readonly failureClass: string | null;
  /** For a throttled failure: the Retry-After the worker reported, ms. */
  readonly retryAfterMs: number | null;
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
  await db.query({
    name: 'kairos-lock-jobs',
    text: 'SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
    values: [[...new Set(ids)]],
  });
}

/** A worker's report that it claimed an attempt's lease and runs it. */
export interface StartRecord {
  readonly jobId: string;
  readonly fence: number;
  readonly attempt: number;
  readonly epoch: number;
  readonly workerId: string;
  readonly startedAt: Date;
}

/**
 * QUEUED → RUNNING for the starts of jobs' current attempts, and who runs each attempt since
 * when: one statement per batch; run after lockJobs. A start applies only to the attempt current
 * in PostgreSQL (the job's fence, live, no outcome yet): any other is refused (VERDICT), changes
 * nothing and is audited in refused_reports. A start after its attempt's result, or after a
 * cancel, is one of those. Returns the refusals by reason.
 */
export async function recordStarts(
  db: Queryable,
  records: readonly StartRecord[],
): Promise<{ refused: Refusals }> {
  if (records.length === 0) return { refused: {} };
  const batch = lastPerAttempt(records);
  const { rows } = await db.query<{ refused: Refusals | null }>({
    name: 'kairos-record-starts',
    text: `WITH r AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::bigint[], $5::text[], $6::timestamptz[])
         AS r(job_id, fence, attempt, epoch, worker_id, started_at)
     ), ${VERDICT('start')}, running AS (
       UPDATE jobs j SET state = 'RUNNING', started_at = v.started_at, updated_at = now()
       FROM v WHERE v.refused IS NULL AND j.id = v.job_id AND j.fence = v.fence AND j.state = 'QUEUED'
     ), started AS (
       INSERT INTO attempts (job_id, fence, attempt, epoch, worker_id, started_at)
       SELECT job_id, fence, attempt, epoch, worker_id, started_at FROM v WHERE refused IS NULL
       ON CONFLICT (job_id, fence) DO UPDATE
         SET worker_id = COALESCE(attempts.worker_id, EXCLUDED.worker_id),
             started_at = COALESCE(attempts.started_at, EXCLUDED.started_at)
         WHERE attempts.outcome IS NULL
     ), ${AUDIT('start', 'NULL')}
     SELECT ${REFUSALS_BY_REASON} AS refused`,
    values: [
      batch.map((r) => r.jobId),
      batch.map((r) => r.fence),
      batch.map((r) => r.attempt),
      batch.map((r) => r.epoch),
      batch.map((r) => r.workerId),
      batch.map((r) => r.startedAt),
    ],
  });
  return { refused: rows[0]?.refused ?? {} };
}

/** A failed result of a job's current attempt, with the job (still locked and not yet terminal). */
export interface CurrentFailure {
  readonly job: Job;
  readonly result: ResultRecord;
}

export interface AppliedResults {
  /** Job rows whose current attempt succeeded: now SUCCEEDED. */
  readonly succeeded: number;
  /** Results of superseded attempts (zombie writes): recorded or refused, changed nothing. */
  readonly suppressed: number;
  /** Results refused (audited in refused_reports, changed nothing), by reason. */
  readonly refused: Refusals;
  /**
   * Failures of jobs' current attempts. Their job rows are left as they were: the caller decides,
   * in the same transaction, between retryJobs and failJobs.
   */
  readonly failed: CurrentFailure[];
}

/**
 * One statement for a batch of results (recordResults). Only a result of a live job's current
 * attempt counts: a success makes the job SUCCEEDED (and, for a run of a schedule, its
 * schedule's last success); a failure is returned, one row per job (at least one row: job columns
 * null when none failed), each with the counts. A result of a superseded attempt (its job moved
 * to a higher fence: the worker was a zombie) is recorded as suppressed if its attempt row has no
 * outcome yet, and changes no job. Any other (VERDICT) is refused: audited, nothing changed. A
 * finished attempt row is never overwritten, whatever the verdict said (`WHERE outcome IS NULL`).
 * Zombie results refused because the reaper already finished their attempt count as suppressed
 * too (kairos_zombie_writes_suppressed_total: invariant 4's alert); a replay of one does not.
 */
const RECORD_RESULTS = `
  WITH r AS (
    SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::text[],
                         $8::text[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::bigint[])
      AS r(job_id, fence, attempt, epoch, outcome, error_class, error_message, worker_id,
           started_at, finished_at, failure_class, retry_after_ms)
  ), ${VERDICT('result')}, recorded AS (
    INSERT INTO attempts (job_id, fence, attempt, epoch, worker_id, outcome, error_class, error_message,
                          started_at, finished_at, failure_class, retry_after_ms, suppressed)
    SELECT job_id, fence, attempt, epoch, worker_id, outcome, error_class, error_message, started_at, finished_at,
           failure_class, retry_after_ms, fence < job_fence
    FROM v WHERE refused IS NULL
    ON CONFLICT (job_id, fence) DO UPDATE
      SET worker_id = EXCLUDED.worker_id, outcome = EXCLUDED.outcome, error_class = EXCLUDED.error_class,
          error_message = EXCLUDED.error_message, started_at = EXCLUDED.started_at,
          finished_at = EXCLUDED.finished_at, failure_class = EXCLUDED.failure_class,
          retry_after_ms = EXCLUDED.retry_after_ms, suppressed = attempts.suppressed OR EXCLUDED.suppressed
      WHERE attempts.outcome IS NULL
    RETURNING suppressed
  ), cur AS (
    SELECT * FROM v WHERE refused IS NULL AND fence = job_fence
  ), succeeded AS (
    -- last_error keeps the latest failure's message when a later attempt succeeds.
    UPDATE jobs j SET state = 'SUCCEEDED', started_at = c.started_at, finished_at = c.finished_at,
                      updated_at = now(), dispatched_at = COALESCE(j.dispatched_at, c.started_at)
    FROM cur c
    WHERE j.id = c.job_id AND j.fence = c.fence AND c.outcome = 'SUCCEEDED' AND j.state IN ${LIVE_STATES}
    RETURNING j.id, j.schedule_id, j.occurrence_at, j.finished_at
  ), last_success AS (
    -- A run of a schedule: its schedule's last success (schedule-health.ts), in schedule id order.
    INSERT INTO schedule_health AS h (schedule_id, last_success_at, last_success_occurrence_at)
    SELECT schedule_id, max(finished_at), max(occurrence_at) FROM succeeded WHERE schedule_id IS NOT NULL
    GROUP BY schedule_id ORDER BY schedule_id
    ON CONFLICT (schedule_id) DO UPDATE
      SET last_success_at = GREATEST(h.last_success_at, EXCLUDED.last_success_at),
          last_success_occurrence_at = GREATEST(h.last_success_occurrence_at, EXCLUDED.last_success_occurrence_at)
  ), ${AUDIT('result', 'outcome')}
  SELECT c.*, f.*
  FROM (SELECT (SELECT count(*) FROM succeeded)::int AS n_succeeded,
               ((SELECT count(*) FROM recorded WHERE suppressed)
                + (SELECT count(*) FROM v WHERE refused IS NOT NULL AND fence < job_fence AND NOT replay)
               )::int AS n_suppressed,
               ${REFUSALS_BY_REASON} AS refused) c
  LEFT JOIN (SELECT ${jobRowColumnsOf('j')}, cf.fence AS r_fence FROM jobs j
             JOIN cur cf ON j.id = cf.job_id AND j.fence = cf.fence
             WHERE cf.outcome = 'FAILED' AND j.state IN ${LIVE_STATES}) f ON true`;

/**
 * Applies attempt results, fenced, in one statement (RECORD_RESULTS): only a result of the job's
 * current attempt (its fence, matched by id and fence: a retry moves the job's due_at) of a job
 * not yet terminal counts, and no finished attempt or terminal job ever changes. A success makes
 * the job SUCCEEDED; a failure is returned for the caller to retry or fail. Run it in a
 * transaction, after lockJobs.
 */
export async function recordResults(
  db: Queryable,
  records: readonly ResultRecord[],
): Promise<AppliedResults> {
  if (records.length === 0) return { succeeded: 0, failed: [], suppressed: 0, refused: {} };
  // An attempt's own result outranks another worker's report that it never started (a claim a
  // Redis that lost the attempt refused): in one batch, the result is the one kept.
  const batch = lastPerAttempt([...records].sort((a, b) => unstartedFirst(a) - unstartedFirst(b)));
  const { rows } = await db.query<
    { n_succeeded: number; n_suppressed: number; refused: Refusals | null } & (
      (JobDbRow & { r_fence: number }) | { [K in keyof JobDbRow | 'r_fence']: null }
    )
  >({
    name: 'kairos-record-results',
    text: RECORD_RESULTS,
    values: [
      batch.map((r) => r.jobId),
      batch.map((r) => r.fence),
      batch.map((r) => r.attempt),
      batch.map((r) => r.epoch),
      batch.map((r) => r.outcome),
      batch.map((r) => r.errorClass),
      batch.map((r) => r.errorMessage),
      batch.map((r) => r.workerId),
      batch.map((r) => r.startedAt),
      batch.map((r) => r.finishedAt),
      batch.map((r) => r.failureClass),
      batch.map((r) => r.retryAfterMs),
    ],
  });
  const byAttempt = new Map(batch.map((r) => [`${r.jobId}/${r.fence}`, r]));
  return {
    succeeded: rows[0]?.n_succeeded ?? 0,
    suppressed: rows[0]?.n_suppressed ?? 0,
    refused: rows[0]?.refused ?? {},
    failed: rows.flatMap((row) => {
      if (row.id === null) return [];
      const result = byAttempt.get(`${row.id}/${row.r_fence}`);
      return result ? [{ job: toJob(row), result }] : [];
    }),
  };
}

export interface RetryRecord {
  readonly jobId: string;
  /** The fence of the attempt that failed: the job changes only if it is still current. */
  readonly fence: number;
  /** When the next attempt is due. */
  readonly dueAt: Date;
  readonly lastError: string | null;
  /** How the failed attempt was classified (transient, throttled, permanent, ambiguous, unstarted). */
  readonly failureClass: string;
  /** The attempt never started (UNSTARTED): dispatched again with the same attempt number. */
  readonly keepAttempt?: boolean;
}

/**
 * Schedules the next attempt of jobs whose current attempt failed: SCHEDULED again at `dueAt`
 * (the row may move to another monthly partition), attempt, fence and version one higher, the
 * phase times of the failed attempt cleared (the attempts table keeps them). The caller writes
 * each returned job's SCHEDULED event in the same transaction; the delay tier dispatches it as
 * any other job. Returns the jobs as updated.
 */
export async function retryJobs(db: Queryable, retries: readonly RetryRecord[]): Promise<Job[]> {
  if (retries.length === 0) return [];
  const r = await db.query<JobDbRow>(
    `UPDATE jobs j SET state = 'SCHEDULED', due_at = r.due_at, attempt = j.attempt + CASE WHEN r.keep THEN 0 ELSE 1 END,
                       fence = j.fence + 1,
                       version = j.version + 1, last_error = r.last_error, last_failure_class = r.failure_class,
                       dispatched_at = NULL,
                       misfire_after = NULL, -- a retry continues a run: never a misfire
                       started_at = NULL, finished_at = NULL, updated_at = now()
     FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::boolean[])
       AS r(job_id, fence, due_at, last_error, failure_class, keep)
     WHERE j.id = r.job_id AND j.fence = r.fence AND j.state IN ${LIVE_STATES}
     RETURNING j.*`,
    [
      retries.map((x) => x.jobId),
      retries.map((x) => x.fence),
      retries.map((x) => x.dueAt),
      retries.map((x) => x.lastError),
      retries.map((x) => x.failureClass),
      retries.map((x) => x.keepAttempt ?? false),
    ],
  );
  const jobs = r.rows.map(toJob);
  const keyed = jobs.filter((j) => j.idempotencyKey !== null);
  if (keyed.length > 0) {
    await db.query(
      `UPDATE job_idempotency i SET due_at = k.due_at
       FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS k(tenant_id, idempotency_key, due_at)
       WHERE i.tenant_id = k.tenant_id AND i.idempotency_key = k.idempotency_key`,
      [keyed.map((j) => j.tenantId), keyed.map((j) => j.idempotencyKey), keyed.map((j) => j.dueAt)],
    );
  }
  return jobs;
}

export interface FailRecord {
  readonly jobId: string;
  /** The fence of the attempt that failed: the job changes only if it is still current. */
  readonly fence: number;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly lastError: string | null;
  /** How the failed attempt was classified (transient, throttled, permanent, ambiguous). */
  readonly failureClass: string;
}

/** Makes jobs whose current attempt failed for good FAILED. Returns the jobs as updated. */
export async function failJobs(db: Queryable, fails: readonly FailRecord[]): Promise<Job[]> {
  if (fails.length === 0) return [];
  const r = await db.query<JobDbRow>(
    `UPDATE jobs j SET state = 'FAILED', started_at = f.started_at, finished_at = f.finished_at,
                       last_error = f.last_error, last_failure_class = f.failure_class, updated_at = now(),
                       dispatched_at = COALESCE(j.dispatched_at, f.started_at)
     FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::text[])
       AS f(job_id, fence, started_at, finished_at, last_error, failure_class)
     WHERE j.id = f.job_id AND j.fence = f.fence AND j.state IN ${LIVE_STATES}
     RETURNING j.*`,
    [
      fails.map((x) => x.jobId),
      fails.map((x) => x.fence),
      fails.map((x) => x.startedAt),
      fails.map((x) => x.finishedAt),
      fails.map((x) => x.lastError),
      fails.map((x) => x.failureClass),
    ],
  );
  return r.rows.map(toJob);
}

/** One failed attempt of a job, as the attempts table recorded it. */
export interface AttemptError {
  readonly attempt: number;
  readonly fence: number;
  readonly workerId: string | null;
  readonly errorClass: string | null;
  readonly failureClass: string | null;
  readonly message: string | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
}

/** The failed attempts of each job, oldest (lowest fence) first. */
export async function failedAttempts(
  db: Queryable,
  jobIds: readonly string[],
): Promise<Map<string, AttemptError[]>> {
  const out = new Map<string, AttemptError[]>();
  if (jobIds.length === 0) return out;
  const r = await db.query<{
    job_id: string;
    attempt: number;
    fence: number;
    worker_id: string | null;
    error_class: string | null;
    failure_class: string | null;
    error_message: string | null;
    started_at: Date | null;
    finished_at: Date | null;
  }>(
    `SELECT job_id, attempt, fence, worker_id, error_class, failure_class, error_message, started_at, finished_at
     FROM attempts WHERE job_id = ANY($1::uuid[]) AND outcome = 'FAILED' ORDER BY job_id, fence`,
    [[...new Set(jobIds)]],
  );
  for (const row of r.rows) {
    const list = out.get(row.job_id) ?? [];
    list.push({
      attempt: row.attempt,
      fence: row.fence,
      workerId: row.worker_id,
      errorClass: row.error_class,
      failureClass: row.failure_class,
      message: row.error_message,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    });
    out.set(row.job_id, list);
  }
  return out;
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
