import { encodeCursor, type Job, type JobSearch } from '@kairos/core';
import type pg from 'pg';
import { JOB_ROW_COLUMNS, toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

export interface JobPage {
  readonly jobs: Job[];
  /** Where the next page starts (null: this was the last). */
  readonly nextCursor: string | null;
}

/** The WHERE clause of a search and its parameters ($1 is always the tenant). */
export function searchWhere(s: JobSearch): { sql: string; values: unknown[] } {
  const values: unknown[] = [s.tenant];
  const and: string[] = ['tenant_id = $1'];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    and.push(sql(`$${values.length}`));
  };
  if (s.states) add((p) => `state = ANY(${p}::text[])`, s.states);
  if (s.types) add((p) => `type = ANY(${p}::text[])`, s.types);
  if (s.resourceClasses) add((p) => `resource_class = ANY(${p}::text[])`, s.resourceClasses);
  if (s.scheduleId) add((p) => `schedule_id = ${p}::uuid`, s.scheduleId);
  if (s.failureClasses) add((p) => `last_failure_class = ANY(${p}::text[])`, s.failureClasses);
  // The text is matched literally: LIKE's own wildcards in it are escaped.
  if (s.errorText) add((p) => `last_error ILIKE '%' || ${p} || '%'`, s.errorText.replace(/[\\%_]/g, '\\$&'));
  if (s.dueAfter) add((p) => `due_at >= ${p}`, s.dueAfter);
  if (s.dueBefore) add((p) => `due_at < ${p}`, s.dueBefore);
  if (s.createdAfter) add((p) => `created_at >= ${p}`, s.createdAfter);
  if (s.createdBefore) add((p) => `created_at < ${p}`, s.createdBefore);
  if (s.finishedAfter) add((p) => `finished_at >= ${p}`, s.finishedAfter);
  if (s.finishedBefore) add((p) => `finished_at < ${p}`, s.finishedBefore);
  if (s.after) {
    values.push(s.after.createdUs.toString(), s.after.id);
    const [us, id] = [`$${values.length - 1}`, `$${values.length}`];
    and.push(
      `(created_at, id) < ('epoch'::timestamptz + ${us}::bigint * interval '1 microsecond', ${id}::uuid)`,
    );
  }
  return { sql: and.join(' AND '), values };
}

/** The SELECT of a search (exported for the EXPLAIN test: it must never scan a table whole). */
export function searchStatement(s: JobSearch): { text: string; values: unknown[] } {
  const where = searchWhere(s);
  where.values.push(s.limit + 1);
  return {
    text: `SELECT ${JOB_ROW_COLUMNS}, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us
           FROM jobs WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT $${where.values.length}`,
    values: where.values,
  };
}

/**
 * One page of a tenant's jobs, newest first. Paging is by (created_at, id) from where the last
 * page ended, so jobs created meanwhile never shift a later page: nothing is skipped or repeated.
 */
export async function searchJobs(db: Queryable, s: JobSearch): Promise<JobPage> {
  const r = await db.query<JobDbRow & { created_us: string }>(searchStatement(s));
  const rows = r.rows.slice(0, s.limit);
  const last = rows.at(-1);
  return {
    jobs: rows.map(toJob),
    nextCursor:
      r.rows.length > s.limit && last
        ? encodeCursor({ createdUs: BigInt(last.created_us), id: last.id })
        : null,
  };
}

export interface JobCount {
  readonly state: string;
  readonly resourceClass: string;
  readonly count: number;
}

/** A tenant's jobs counted by state and resource class (read from an index alone). */
export async function countJobs(db: Queryable, tenant: string): Promise<JobCount[]> {
  const r = await db.query<{ state: string; resource_class: string; n: string }>(
    `SELECT state, resource_class, count(*) AS n FROM jobs WHERE tenant_id = $1
     GROUP BY state, resource_class ORDER BY state, resource_class`,
    [tenant],
  );
  return r.rows.map((x) => ({ state: x.state, resourceClass: x.resource_class, count: Number(x.n) }));
}

/** One attempt of a job as the attempts table has it. */
export interface AttemptRow {
  readonly fence: number;
  readonly attempt: number;
  readonly epoch: number;
  readonly workerId: string | null;
  readonly outcome: string | null;
  readonly failureClass: string | null;
  readonly errorClass: string | null;
  readonly errorMessage: string | null;
  readonly retryAfterMs: number | null;
  readonly dispatchedAt: Date | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** A zombie's late result: recorded, changed nothing. */
  readonly suppressed: boolean;
}

/** Every attempt of a job, first (lowest fence) first. */
export async function jobAttempts(db: Queryable, jobId: string): Promise<AttemptRow[]> {
  const r = await db.query<{
    fence: string;
    attempt: number;
    epoch: string;
    worker_id: string | null;
    outcome: string | null;
    failure_class: string | null;
    error_class: string | null;
    error_message: string | null;
    retry_after_ms: string | null;
    dispatched_at: Date | null;
    started_at: Date | null;
    finished_at: Date | null;
    suppressed: boolean;
  }>(
    `SELECT fence, attempt, epoch, worker_id, outcome, failure_class, error_class, error_message,
            retry_after_ms, dispatched_at, started_at, finished_at, suppressed
     FROM attempts WHERE job_id = $1 ORDER BY fence, attempt`,
    [jobId],
  );
  return r.rows.map((a) => ({
    fence: Number(a.fence),
    attempt: a.attempt,
    epoch: Number(a.epoch),
    workerId: a.worker_id,
    outcome: a.outcome,
    failureClass: a.failure_class,
    errorClass: a.error_class,
    errorMessage: a.error_message,
    retryAfterMs: a.retry_after_ms === null ? null : Number(a.retry_after_ms),
    dispatchedAt: a.dispatched_at,
    startedAt: a.started_at,
    finishedAt: a.finished_at,
    suppressed: a.suppressed,
  }));
}
