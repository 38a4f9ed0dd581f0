import type {
  Job,
  MisfirePolicy,
  OverlapPolicy,
  RunKind,
  Schedule,
  ScheduleJobTemplate,
  ScheduleState,
  DstGapPolicy,
  DstOverlapPolicy,
} from '@kairos/core';
import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

interface ScheduleDbRow {
  id: string;
  tenant_id: string;
  idempotency_key: string | null;
  cron: string;
  time_zone: string;
  start_at: Date | null;
  end_at: Date | null;
  job_template: {
    type: string;
    resource_class: string;
    payload: unknown;
    max_attempts: number;
    retry: { base_ms: number; cap_ms: number; jitter_ms: number };
    deadline_ms: number | null;
  };
  dst_gap: DstGapPolicy;
  dst_overlap: DstOverlapPolicy;
  misfire: { kind: MisfirePolicy['kind']; max_count?: number; window_ms?: number };
  misfire_tolerance_ms: number;
  overlap: OverlapPolicy;
  jitter_ms: number;
  state: ScheduleState;
  version: number;
  routing_key: string;
  shard: number;
  cursor_instant: Date;
  cursor_nominal: string | null;
  last_fire_at: Date | null;
  next_fire_at: Date | null;
  generate_at: Date | null;
  backfill_next_at: Date | null;
  misfires_skipped: number;
  created_at: Date;
  updated_at: Date;
  paused_at: Date | null;
  deleted_at: Date | null;
}

function misfireOf(m: ScheduleDbRow['misfire']): MisfirePolicy {
  switch (m.kind) {
    case 'fire_all':
      return { kind: 'fire_all', maxCount: m.max_count ?? 1 };
    case 'within':
      return { kind: 'within', windowMs: m.window_ms ?? 0, maxCount: m.max_count ?? 1 };
    default:
      return { kind: m.kind };
  }
}

function misfireJson(m: MisfirePolicy): ScheduleDbRow['misfire'] {
  switch (m.kind) {
    case 'fire_all':
      return { kind: m.kind, max_count: m.maxCount };
    case 'within':
      return { kind: m.kind, window_ms: m.windowMs, max_count: m.maxCount };
    default:
      return { kind: m.kind };
  }
}

function templateJson(t: ScheduleJobTemplate): ScheduleDbRow['job_template'] {
  return {
    type: t.type,
    resource_class: t.resourceClass,
    payload: JSON.parse(t.payload) as unknown,
    max_attempts: t.maxAttempts,
    retry: { base_ms: t.retry.baseMs, cap_ms: t.retry.capMs, jitter_ms: t.retry.jitterMs },
    deadline_ms: t.deadlineMs,
  };
}

export function toSchedule(r: ScheduleDbRow): Schedule {
  const t = r.job_template;
  return {
    id: r.id,
    tenantId: r.tenant_id,
    idempotencyKey: r.idempotency_key,
    cron: r.cron,
    timeZone: r.time_zone,
    startAt: r.start_at,
    endAt: r.end_at,
    dst: { gap: r.dst_gap, overlap: r.dst_overlap },
    job: {
      type: t.type,
      resourceClass: t.resource_class,
      payload: JSON.stringify(t.payload ?? {}),
      maxAttempts: t.max_attempts,
      retry: { baseMs: t.retry.base_ms, capMs: t.retry.cap_ms, jitterMs: t.retry.jitter_ms },
      deadlineMs: t.deadline_ms,
    },
    misfire: misfireOf(r.misfire),
    misfireToleranceMs: r.misfire_tolerance_ms,
    overlap: r.overlap,
    jitterMs: r.jitter_ms,
    state: r.state,
    version: r.version,
    routingKey: r.routing_key,
    shard: r.shard,
    cursor: { instant: r.cursor_instant.getTime(), nominal: r.cursor_nominal },
    lastFireAt: r.last_fire_at,
    nextFireAt: r.next_fire_at,
    generateAt: r.generate_at,
    backfillNextAt: r.backfill_next_at,
    misfiresSkipped: Number(r.misfires_skipped),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    pausedAt: r.paused_at,
    deletedAt: r.deleted_at,
  };
}

/** Every column of a schedule, in one order, for insert and save. */
function columns(s: Schedule): Record<string, unknown> {
  return {
    id: s.id,
    tenant_id: s.tenantId,
    idempotency_key: s.idempotencyKey,
    cron: s.cron,
    time_zone: s.timeZone,
    start_at: s.startAt,
    end_at: s.endAt,
    job_template: JSON.stringify(templateJson(s.job)),
    dst_gap: s.dst.gap,
    dst_overlap: s.dst.overlap,
    misfire: JSON.stringify(misfireJson(s.misfire)),
    misfire_tolerance_ms: s.misfireToleranceMs,
    overlap: s.overlap,
    jitter_ms: s.jitterMs,
    state: s.state,
    version: s.version,
    routing_key: s.routingKey,
    shard: s.shard,
    cursor_instant: new Date(s.cursor.instant),
    cursor_nominal: s.cursor.nominal,
    last_fire_at: s.lastFireAt,
    next_fire_at: s.nextFireAt,
    generate_at: s.generateAt,
    backfill_next_at: s.backfillNextAt,
    misfires_skipped: s.misfiresSkipped,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    paused_at: s.pausedAt,
    deleted_at: s.deletedAt,
  };
}

/**
 * Inserts a schedule. With an idempotency key already used by the tenant, nothing is inserted and
 * undefined is returned (the caller answers with the first schedule).
 */
export async function insertSchedule(db: Queryable, s: Schedule): Promise<Schedule | undefined> {
  const c = columns(s);
  const names = Object.keys(c);
  const r = await db.query<ScheduleDbRow>(
    `INSERT INTO schedules (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})
     ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING *`,
    Object.values(c),
  );
  return r.rows[0] && toSchedule(r.rows[0]);
}

/** Writes every mutable column of a schedule the caller holds locked; updated_at = `now`. */
export async function saveSchedule(db: Queryable, s: Schedule): Promise<Schedule> {
  const c = columns(s);
  delete c.id;
  delete c.created_at;
  const names = Object.keys(c);
  const r = await db.query<ScheduleDbRow>(
    `UPDATE schedules SET ${names.map((n, i) => `${n} = $${i + 2}`).join(', ')} WHERE id = $1 RETURNING *`,
    [s.id, ...Object.values(c)],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`schedule ${s.id} vanished while locked`);
  return toSchedule(row);
}

export async function findSchedule(db: Queryable, id: string): Promise<Schedule | undefined> {
  const r = await db.query<ScheduleDbRow>('SELECT * FROM schedules WHERE id = $1', [id]);
  return r.rows[0] && toSchedule(r.rows[0]);
}

export async function findScheduleByKey(
  db: Queryable,
  tenantId: string,
  key: string,
): Promise<Schedule | undefined> {
  const r = await db.query<ScheduleDbRow>(
    'SELECT * FROM schedules WHERE tenant_id = $1 AND idempotency_key = $2',
    [tenantId, key],
  );
  return r.rows[0] && toSchedule(r.rows[0]);
}

/**
 * Locks a schedule for the caller's transaction. `skipLocked`: undefined at once when another
 * transaction holds it (the generator: someone else is generating it); otherwise waits.
 */
export async function lockSchedule(
  db: Queryable,
  id: string,
  skipLocked = false,
): Promise<Schedule | undefined> {
  const r = await db.query<ScheduleDbRow>(
    `SELECT * FROM schedules WHERE id = $1 FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''}`,
    [id],
  );
  return r.rows[0] && toSchedule(r.rows[0]);
}

/** A tenant's schedules (deleted ones left out), oldest first, after the `after` id (UUIDv7: creation order). */
export async function listSchedules(
  db: Queryable,
  tenantId: string,
  after: string | null,
  limit: number,
): Promise<Schedule[]> {
  const r = await db.query<ScheduleDbRow>(
    `SELECT * FROM schedules WHERE tenant_id = $1 AND state <> 'DELETED' AND ($2::uuid IS NULL OR id > $2::uuid)
     ORDER BY id LIMIT $3`,
    [tenantId, after, limit],
  );
  return r.rows.map(toSchedule);
}

/**
 * Schedules the generator must look at by `now`: active ones whose generate_at has come, and any
 * with runs waiting for the misfire decision. At most `limit`, most urgent first.
 */
export async function schedulesToGenerate(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT id FROM (
       (SELECT id, generate_at AS at FROM schedules
        WHERE state = 'ACTIVE' AND generate_at <= $1 ORDER BY generate_at LIMIT $2)
       UNION ALL
       (SELECT DISTINCT ON (schedule_id) schedule_id AS id, misfire_after AS at FROM jobs
        WHERE state = 'SCHEDULED' AND misfire_after < $1 AND schedule_id IS NOT NULL AND attempt = 1
        ORDER BY schedule_id, misfire_after LIMIT $2)
     ) t GROUP BY id ORDER BY min(at) LIMIT $2`,
    [now, limit],
  );
  return r.rows.map((row) => row.id);
}

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
 * Releases late runs the misfire policy keeps: catch-up runs now, no longer waiting for a decision,
 * version up so their new SCHEDULED event puts them back into the hot set. Returns them.
 */
export async function releaseLateRuns(db: Queryable, ids: readonly string[]): Promise<Job[]> {
  if (ids.length === 0) return [];
  const r = await db.query<JobDbRow>(
    `UPDATE jobs SET occurrence_kind = 'catch_up', misfire_after = NULL, version = version + 1, updated_at = now()
     WHERE id = ANY($1::uuid[]) AND state = 'SCHEDULED' RETURNING *`,
    [ids],
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

/** Policies the dispatcher needs for the schedules of claimed runs. */
export async function schedulePolicies(
  db: Queryable,
  ids: readonly string[],
): Promise<Map<string, { state: ScheduleState; overlap: OverlapPolicy }>> {
  if (ids.length === 0) return new Map();
  const r = await db.query<{ id: string; state: ScheduleState; overlap: OverlapPolicy }>(
    'SELECT id, state, overlap FROM schedules WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Map(r.rows.map((row) => [row.id, { state: row.state, overlap: row.overlap }]));
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
