import type { ScheduleRunFacts } from '@kairos/core';
import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * What happened to schedules' runs (schedule_health): successes, late runs, misfires and skips.
 * Every writer upserts its rows last in its transaction and in schedule id order, so writers never
 * wait on one another in a cycle, and none of them waits behind a locked schedule row.
 */

interface HealthRow {
  schedule_id: string;
  last_success_at: Date | null;
  last_success_occurrence_at: Date | null;
  late_runs: string;
  late_occurrence_at: Date | null;
  sla_judged_until: Date | null;
  misfired_runs: string;
  skipped_runs: string;
}

/** The run facts of schedules, by id (a schedule without any run has no entry). */
export async function scheduleRunFacts(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, ScheduleRunFacts>> {
  if (ids.length === 0) return new Map();
  const r = await db.query<HealthRow>('SELECT * FROM schedule_health WHERE schedule_id = ANY($1::uuid[])', [
    ids,
  ]);
  return new Map(
    r.rows.map((row) => [
      row.schedule_id,
      {
        lastSuccessAt: row.last_success_at,
        lastSuccessOccurrenceAt: row.last_success_occurrence_at,
        lateRuns: Number(row.late_runs),
        lateOccurrenceAt: row.late_occurrence_at,
        judgedUntil: row.sla_judged_until,
        misfiredRuns: Number(row.misfired_runs),
        skippedRuns: Number(row.skipped_runs),
      },
    ]),
  );
}

/** Runs of a schedule skipped by its misfire policy, or by its overlap policy or a pause. */
export interface SkippedRunCount {
  readonly scheduleId: string;
  readonly misfired: number;
  readonly skipped: number;
}

/** Adds skipped runs to schedules' counters (run it last in the transaction that skipped them). */
export async function countSkippedRuns(db: Queryable, counts: readonly SkippedRunCount[]): Promise<void> {
  const rows = counts.filter((c) => c.misfired > 0 || c.skipped > 0);
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO schedule_health AS h (schedule_id, misfired_runs, skipped_runs)
     SELECT id, sum(m), sum(s) FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS c(id, m, s)
     GROUP BY id ORDER BY id
     ON CONFLICT (schedule_id) DO UPDATE
       SET misfired_runs = h.misfired_runs + EXCLUDED.misfired_runs,
           skipped_runs = h.skipped_runs + EXCLUDED.skipped_runs`,
    [rows.map((c) => c.scheduleId), rows.map((c) => c.misfired), rows.map((c) => c.skipped)],
  );
}

/** A schedule whose runs were judged against its SLA. */
export interface SlaJudgement {
  readonly scheduleId: string;
  readonly tenantId: string;
  readonly slaMs: number;
  /** Runs judged now. */
  readonly judged: number;
  /** Of which late. */
  readonly late: number;
}

/**
 * The runs of active schedules with an SLA, fired at or after sla_since, not judged yet, whose
 * deadline (fire time + sla_ms, by PostgreSQL's clock) has passed: each is judged once. A run is on
 * time if it SUCCEEDED by its deadline. Runs the overlap policy or a pause skipped, and cancelled
 * runs (an update, cancel_previous, a user), are not judged: they were not meant to run. A run the
 * misfire policy dropped is (skip reasons start "misfire:"): the schedule missed its time.
 */
const JUDGE = `
  WITH watched AS (
    SELECT s.id, s.tenant_id, s.sla_ms, s.sla_since, h.sla_judged_until AS judged,
           now() - s.sla_ms * interval '1 millisecond' AS upto
    FROM schedules s LEFT JOIN schedule_health h ON h.schedule_id = s.id
    WHERE s.sla_ms IS NOT NULL AND s.state = 'ACTIVE' AND s.sla_since IS NOT NULL
  ), runs AS (
    SELECT w.id, o.fire_at, o.occurrence_at,
           (j.state = 'SUCCEEDED' AND j.finished_at <= o.fire_at + w.sla_ms * interval '1 millisecond') IS TRUE
             AS on_time,
           (j.state = 'CANCELLED' OR (j.state = 'SKIPPED' AND j.last_error NOT LIKE 'misfire:%')) IS TRUE
             AS excused
    FROM watched w
    JOIN schedule_occurrences o ON o.schedule_id = w.id AND o.fire_at >= w.sla_since
         AND o.fire_at > COALESCE(w.judged, '-infinity') AND o.fire_at <= w.upto
    LEFT JOIN jobs j ON j.id = o.job_id
  ), tally AS (
    SELECT id, max(fire_at) AS judged_until, count(*)::int AS judged,
           count(*) FILTER (WHERE NOT on_time AND NOT excused)::int AS late,
           max(occurrence_at) FILTER (WHERE NOT on_time AND NOT excused) AS late_at
    FROM runs GROUP BY id
  ), saved AS (
    INSERT INTO schedule_health AS h (schedule_id, sla_judged_until, late_runs, late_occurrence_at)
    SELECT id, judged_until, late, late_at FROM tally ORDER BY id
    ON CONFLICT (schedule_id) DO UPDATE
      SET sla_judged_until = GREATEST(h.sla_judged_until, EXCLUDED.sla_judged_until),
          late_runs = h.late_runs + EXCLUDED.late_runs,
          late_occurrence_at = GREATEST(h.late_occurrence_at, EXCLUDED.late_occurrence_at)
  )
  SELECT t.id, w.tenant_id, w.sla_ms, t.judged, t.late FROM tally t JOIN watched w USING (id) ORDER BY t.id`;

/**
 * Judges the runs whose SLA deadline has passed (JUDGE), in one statement. Several trackers may
 * run the check; one judges at a time (a transaction-scoped advisory lock per schema), so a run
 * is judged, and a late one counted, once. Returns undefined when another tracker holds the turn.
 */
export async function judgeScheduleRuns(db: pg.PoolClient): Promise<SlaJudgement[] | undefined> {
  const turn = await db.query<{ ok: boolean }>(
    `SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || ':kairos-schedule-sla')) AS ok`,
  );
  if (!turn.rows[0]?.ok) return undefined;
  const r = await db.query<{ id: string; tenant_id: string; sla_ms: number; judged: number; late: number }>(
    JUDGE,
  );
  return r.rows.map((row) => ({
    scheduleId: row.id,
    tenantId: row.tenant_id,
    slaMs: row.sla_ms,
    judged: row.judged,
    late: row.late,
  }));
}

/** A schedule in breach of its SLA (ScheduleHealth 'late'). */
export interface SlaBreach {
  readonly scheduleId: string;
  readonly tenantId: string;
  readonly slaMs: number;
  /** Occurrence time of the newest late run. */
  readonly lateOccurrenceAt: Date;
}

/**
 * Active schedules in breach (of one tenant, or of all): a run judged late since the SLA was set,
 * and no run of a later occurrence succeeded since (as slaBreached in core).
 */
export async function schedulesInBreach(db: Queryable, tenant?: string): Promise<SlaBreach[]> {
  const r = await db.query<{ id: string; tenant_id: string; sla_ms: number; late_occurrence_at: Date }>(
    `SELECT s.id, s.tenant_id, s.sla_ms, h.late_occurrence_at
     FROM schedule_health h JOIN schedules s ON s.id = h.schedule_id
     WHERE h.late_occurrence_at > COALESCE(h.last_success_occurrence_at, '-infinity')
       AND s.state = 'ACTIVE' AND s.sla_ms IS NOT NULL AND h.late_occurrence_at >= s.sla_since
       ${tenant === undefined ? '' : 'AND s.tenant_id = $1'}
     ORDER BY s.id`,
    tenant === undefined ? [] : [tenant],
  );
  return r.rows.map((row) => ({
    scheduleId: row.id,
    tenantId: row.tenant_id,
    slaMs: row.sla_ms,
    lateOccurrenceAt: row.late_occurrence_at,
  }));
}

/**
 * Milliseconds until the earliest SLA deadline of a run not judged yet (by PostgreSQL's clock;
 * negative: passed), or null when no run waits to be judged.
 */
export async function nextSlaDeadlineMs(db: Queryable): Promise<number | null> {
  const r = await db.query<{ ms: number | null }>(
    `SELECT (EXTRACT(EPOCH FROM min(n.fire_at + s.sla_ms * interval '1 millisecond') - now()) * 1000)::float8 AS ms
     FROM schedules s LEFT JOIN schedule_health h ON h.schedule_id = s.id
     CROSS JOIN LATERAL (
       SELECT o.fire_at FROM schedule_occurrences o
       WHERE o.schedule_id = s.id AND o.fire_at >= s.sla_since AND o.fire_at > COALESCE(h.sla_judged_until, '-infinity')
       ORDER BY o.fire_at LIMIT 1) n
     WHERE s.sla_ms IS NOT NULL AND s.state = 'ACTIVE'`,
  );
  return r.rows[0]?.ms ?? null;
}
