import type { Job, RunKind } from '@kairos/core';
import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** The occurrence ledger of schedules: one row per occurrence that got a job. */

/** One occurrence that got a job. */
export interface OccurrenceRow {
  readonly scheduleId: string;
  readonly occurrenceId: string;
  readonly kind: RunKind;
  readonly nominal: string | null;
  readonly occurrenceAt: Date;
  readonly fireAt: Date;
  readonly jobId: string;
  readonly scheduleVersion: number;
}

/**
 * Records occurrences; one already recorded is left as it is. Returns the occurrence ids recorded
 * now: only those get a job (generating the same occurrence twice is a no-op).
 */
export async function insertOccurrences(db: Queryable, rows: readonly OccurrenceRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const r = await db.query<{ occurrence_id: string }>(
    `INSERT INTO schedule_occurrences (schedule_id, occurrence_id, kind, nominal, occurrence_at, fire_at, job_id,
                                      schedule_version)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
                          $7::uuid[], $8::int[])
     ON CONFLICT DO NOTHING
     RETURNING occurrence_id`,
    [
      rows.map((o) => o.scheduleId),
      rows.map((o) => o.occurrenceId),
      rows.map((o) => o.kind),
      rows.map((o) => o.nominal),
      rows.map((o) => o.occurrenceAt),
      rows.map((o) => o.fireAt),
      rows.map((o) => o.jobId),
      rows.map((o) => o.scheduleVersion),
    ],
  );
  return new Set(r.rows.map((row) => row.occurrence_id));
}

/** Forgets occurrences whose jobs were cancelled to be generated again (update, pause). */
export async function deleteOccurrences(
  db: Queryable,
  scheduleId: string,
  occurrenceIds: readonly string[],
): Promise<void> {
  if (occurrenceIds.length === 0) return;
  await db.query(
    'DELETE FROM schedule_occurrences WHERE schedule_id = $1 AND occurrence_id = ANY($2::uuid[])',
    [scheduleId, occurrenceIds],
  );
}

/** Instants of the schedule's newest `n` generated regular occurrences, newest first. */
export async function newestOccurrenceInstants(
  db: Queryable,
  scheduleId: string,
  n: number,
): Promise<Date[]> {
  const r = await db.query<{ occurrence_at: Date }>(
    `SELECT occurrence_at FROM schedule_occurrences WHERE schedule_id = $1 AND kind IN ('regular', 'catch_up')
     ORDER BY occurrence_at DESC LIMIT $2`,
    [scheduleId, n],
  );
  return r.rows.map((row) => row.occurrence_at);
}

/** The fire time of the schedule's newest generated occurrence still recorded, if any. */
export async function lastOccurrenceFireAt(db: Queryable, scheduleId: string): Promise<Date | null> {
  const r = await db.query<{ fire_at: Date | null }>(
    `SELECT max(fire_at) AS fire_at FROM schedule_occurrences
     WHERE schedule_id = $1 AND kind IN ('regular', 'catch_up')`,
    [scheduleId],
  );
  return r.rows[0]?.fire_at ?? null;
}

/** The job of an occurrence already recorded (a repeated trigger or backfill), if any. */
export async function findOccurrenceJob(
  db: Queryable,
  scheduleId: string,
  occurrenceId: string,
): Promise<Job | undefined> {
  const r = await db.query<JobDbRow>(
    `SELECT j.* FROM schedule_occurrences o JOIN jobs j ON j.id = o.job_id
     WHERE o.schedule_id = $1 AND o.occurrence_id = $2`,
    [scheduleId, occurrenceId],
  );
  return r.rows[0] && toJob(r.rows[0]);
}
