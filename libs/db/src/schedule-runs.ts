import type { Job, RunKind } from '@kairos/core';
import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** The runs of schedules (their jobs) as the misfire, overlap and lifecycle decisions see them. */

/**
 * Cancels the schedule's runs that have not been dispatched: SCHEDULED first attempts of the given
 * kinds, due after `dueAfter` when given. Rows another transaction holds (the dispatcher claiming
 * one that just came due) are left to it. Version up, as any cancel; returns the jobs cancelled.
 */
export async function cancelScheduledRuns(
  db: Queryable,
  scheduleId: string,
  kinds: readonly RunKind[],
  dueAfter: Date | null,
  reason: string,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `WITH c AS (
       SELECT id, due_at FROM jobs
       WHERE schedule_id = $1 AND state = 'SCHEDULED' AND attempt = 1 AND occurrence_kind = ANY($2::text[])
         AND ($3::timestamptz IS NULL OR due_at > $3::timestamptz)
       ORDER BY id FOR UPDATE SKIP LOCKED
     )
     UPDATE jobs j SET state = 'CANCELLED', version = j.version + 1, finished_at = now(), updated_at = now(),
                       last_error = $4
     FROM c WHERE j.id = c.id AND j.due_at = c.due_at
     RETURNING j.*`,
    [scheduleId, kinds, dueAfter, reason],
  );
  return r.rows.map(toJob);
}

/** A run of a schedule still waiting to be dispatched, as the misfire and overlap decisions see it. */
export interface PendingRun {
  readonly id: string;
  readonly dueAt: Date;
  readonly state: string;
  readonly attempt: number;
  readonly occurrenceAt: Date;
  readonly kind: RunKind;
  readonly misfireAfter: Date | null;
}

interface PendingRunRow {
  id: string;
  due_at: Date;
  state: string;
  attempt: number;
  occurrence_at: Date;
  occurrence_kind: RunKind;
  misfire_after: Date | null;
  schedule_id: string;
}

function toPending(r: PendingRunRow): PendingRun {
  return {
    id: r.id,
    dueAt: r.due_at,
    state: r.state,
    attempt: r.attempt,
    occurrenceAt: r.occurrence_at,
    kind: r.occurrence_kind,
    misfireAfter: r.misfire_after,
  };
}

/**
 * The schedule's runs the misfire decision covers at `now`, oldest occurrence first, locked: those
 * whose time passed by more than the tolerance while undecided (misfire_after < now), and catch-up
 * runs chosen earlier but not dispatched yet (a newer decision may supersede them).
 */
export async function lockLateRuns(db: Queryable, scheduleId: string, now: Date): Promise<PendingRun[]> {
  const r = await db.query<PendingRunRow>(
    `SELECT id, due_at, state, attempt, occurrence_at, occurrence_kind, misfire_after, schedule_id FROM jobs
     WHERE schedule_id = $1 AND state = 'SCHEDULED' AND attempt = 1
       AND (misfire_after < $2 OR (occurrence_kind = 'catch_up' AND due_at < $2))
     ORDER BY id FOR UPDATE`,
    [scheduleId, now],
  );
  return r.rows.map(toPending).sort((a, b) => a.occurrenceAt.getTime() - b.occurrenceAt.getTime());
}

/**
 * Catch-up runs of the current outage already dispatched. The outage began after the newest regular
 * run dispatched before `oldestMissed` (the oldest occurrence now being decided); the catch-up runs
 * dispatched since belong to it, even when on-time runs newer than the missed ones were dispatched
 * first. A misfire decision counts them against its policy's quota. A retry clears dispatched_at;
 * its attempt number still says it was dispatched.
 */
export async function dispatchedCatchUps(
  db: Queryable,
  scheduleId: string,
  oldestMissed: Date,
): Promise<number> {
  const r = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM jobs c
     WHERE c.schedule_id = $1 AND c.occurrence_kind = 'catch_up'
       AND (c.dispatched_at IS NOT NULL OR c.attempt > 1)
       AND c.occurrence_at > COALESCE(
         (SELECT max(occurrence_at) FROM jobs r
          WHERE r.schedule_id = $1 AND r.occurrence_kind = 'regular' AND r.occurrence_at < $2
            AND (r.dispatched_at IS NOT NULL OR r.attempt > 1)),
         '-infinity')`,
    [scheduleId, oldestMissed],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Releases late runs the misfire policy keeps: catch-up runs now, version up so their new
 * SCHEDULED event puts them back into the hot set. Returns them. `windowMs` (policy `within`):
 * a catch-up not dispatched while younger than the window goes back to the decision (and is
 * dropped); otherwise it no longer waits for one.
 */
export async function releaseLateRuns(
  db: Queryable,
  ids: readonly string[],
  windowMs: number | null = null,
): Promise<Job[]> {
  if (ids.length === 0) return [];
  const r = await db.query<JobDbRow>(
    `UPDATE jobs SET occurrence_kind = 'catch_up', version = version + 1, updated_at = now(),
                     misfire_after = CASE WHEN $2::bigint IS NULL THEN NULL
                                          ELSE due_at + $2::bigint * interval '1 millisecond' END
     WHERE id = ANY($1::uuid[]) AND state = 'SCHEDULED' RETURNING *`,
    [ids, windowMs],
  );
  return r.rows.map(toJob);
}

/**
 * Records runs SKIPPED (misfire or overlap policy, paused schedule): terminal, version up, the
 * reason in last_error. Works on runs still SCHEDULED and on runs claimed (QUEUED) in the caller's
 * transaction but not produced. Returns the ids skipped.
 */
export async function skipRuns(db: Queryable, ids: readonly string[], reason: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await db.query<{ id: string }>(
    `UPDATE jobs SET state = 'SKIPPED', version = version + 1, finished_at = now(), updated_at = now(),
                     dispatched_at = NULL, last_error = $2
     WHERE id = ANY($1::uuid[]) AND state IN ('SCHEDULED', 'QUEUED') RETURNING id`,
    [ids, reason],
  );
  return r.rows.map((row) => row.id);
}

/** Cancels runs claimed in the caller's transaction (their schedule was deleted). */
export async function cancelClaimedRuns(
  db: Queryable,
  ids: readonly string[],
  reason: string,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await db.query<{ id: string }>(
    `UPDATE jobs SET state = 'CANCELLED', version = version + 1, finished_at = now(), updated_at = now(),
                     dispatched_at = NULL, last_error = $2
     WHERE id = ANY($1::uuid[]) AND state IN ('SCHEDULED', 'QUEUED') RETURNING id`,
    [ids, reason],
  );
  return r.rows.map((row) => row.id);
}

/**
 * Puts a run claimed in the caller's transaction back to wait (buffer_one): SCHEDULED again, due
 * at `dueAt`, version up (its new event puts it back into the hot set), never a misfire for
 * having waited. Returns the job.
 */
export async function deferRun(db: Queryable, id: string, dueAt: Date): Promise<Job | undefined> {
  const r = await db.query<JobDbRow>(
    `UPDATE jobs SET state = 'SCHEDULED', due_at = $2, version = version + 1, dispatched_at = NULL,
                     misfire_after = NULL, updated_at = now()
     WHERE id = $1 AND state IN ('SCHEDULED', 'QUEUED') RETURNING *`,
    [id, dueAt],
  );
  return r.rows[0] && toJob(r.rows[0]);
}

/** The occurrence facts of jobs (claimed ones: what the overlap decision needs), by id. */
export async function pendingRuns(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, PendingRun & { scheduleId: string }>> {
  if (ids.length === 0) return new Map();
  const r = await db.query<PendingRunRow>(
    `SELECT id, due_at, state, attempt, occurrence_at, occurrence_kind, misfire_after, schedule_id FROM jobs
     WHERE id = ANY($1::uuid[]) AND schedule_id IS NOT NULL`,
    [ids],
  );
  return new Map(r.rows.map((row) => [row.id, { ...toPending(row), scheduleId: row.schedule_id }]));
}

/** The unfinished runs of schedules (SCHEDULED, QUEUED, RUNNING), except the given jobs. */
export async function unfinishedRuns(
  db: Queryable,
  scheduleIds: readonly string[],
  except: readonly string[],
): Promise<(PendingRun & { scheduleId: string })[]> {
  if (scheduleIds.length === 0) return [];
  const r = await db.query<PendingRunRow>(
    `SELECT id, due_at, state, attempt, occurrence_at, occurrence_kind, misfire_after, schedule_id FROM jobs
     WHERE schedule_id = ANY($1::uuid[]) AND state IN ('SCHEDULED', 'QUEUED', 'RUNNING')
       AND NOT (id = ANY($2::uuid[]))`,
    [scheduleIds, except],
  );
  return r.rows.map((row) => ({ ...toPending(row), scheduleId: row.schedule_id }));
}

/** The schedule's runs, newest occurrence first, before `before` (an occurrence time) when given. */
export async function scheduleRuns(
  db: Queryable,
  scheduleId: string,
  before: Date | null,
  limit: number,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `SELECT * FROM jobs WHERE schedule_id = $1 AND ($2::timestamptz IS NULL OR occurrence_at < $2)
     ORDER BY occurrence_at DESC, id DESC LIMIT $3`,
    [scheduleId, before, limit],
  );
  return r.rows.map(toJob);
}
