import type {
  MisfirePolicy,
  OverlapPolicy,
  Schedule,
  ScheduleJobTemplate,
  ScheduleState,
  DstGapPolicy,
  DstOverlapPolicy,
} from '@kairos/core';
import type pg from 'pg';

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
  sla_ms: number | null;
  sla_since: Date | null;
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
    slaMs: r.sla_ms,
    slaSince: r.sla_since,
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
    sla_ms: s.slaMs,
    sla_since: s.slaSince,
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

/**
 * When schedulesToGenerate() next has something: the earliest generation time of an active
 * schedule or misfire point of an undecided run (both indexed); null when there is none.
 */
export async function nextGenerationAt(db: Queryable): Promise<Date | null> {
  const r = await db.query<{ at: Date | null }>(
    `SELECT least(
       (SELECT min(generate_at) FROM schedules WHERE state = 'ACTIVE'),
       (SELECT min(misfire_after) FROM jobs
         WHERE state = 'SCHEDULED' AND misfire_after IS NOT NULL AND schedule_id IS NOT NULL AND attempt = 1)
     ) AS at`,
  );
  return r.rows[0]?.at ?? null;
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
