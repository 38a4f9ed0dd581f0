import { CANARY_TENANT, type Job } from '@kairos/core';
import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * SCHEDULED jobs due more than `graceMs` ago (PostgreSQL's clock), oldest first, at most `limit`:
 * a descent of the (shard, due_at) SCHEDULED index per shard over the overdue range only.
 * Canaries are left out: a lost canary is what the canary alert is for.
 */
export async function overdueScheduledJobs(
  db: Queryable,
  shards: number,
  graceMs: number,
  limit: number,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `SELECT * FROM jobs
      WHERE shard = ANY(ARRAY(SELECT generate_series(0, $1::int - 1))) AND state = 'SCHEDULED'
        AND due_at < now() - $2 * interval '1 ms' AND tenant_id <> $4
      ORDER BY due_at LIMIT $3`,
    [shards, graceMs, limit, CANARY_TENANT],
  );
  return r.rows.map(toJob);
}

/**
 * Jobs in `state` (QUEUED or RUNNING) whose last change is older than `idleMs`, oldest first, at
 * most `limit`, from the live index (in-flight jobs only).
 */
export async function idleLiveJobs(
  db: Queryable,
  state: 'QUEUED' | 'RUNNING',
  idleMs: number,
  limit: number,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `SELECT * FROM jobs
      WHERE state = $1 AND updated_at < now() - $2 * interval '1 ms' AND tenant_id <> $4
      ORDER BY updated_at LIMIT $3`,
    [state, idleMs, limit, CANARY_TENANT],
  );
  return r.rows.map(toJob);
}

/** An active schedule whose next run is overdue and that the generator will not look at in time. */
export interface StalledSchedule {
  readonly id: string;
  readonly nextFireAt: Date;
  readonly generateAt: Date | null;
}

/**
 * Active schedules whose next occurrence (not generated yet) was due more than `graceMs` ago
 * while their generation time is unset or later still: the generator lost track of them.
 */
export async function stalledSchedules(
  db: Queryable,
  graceMs: number,
  limit: number,
): Promise<StalledSchedule[]> {
  const r = await db.query<{ id: string; next_fire_at: Date; generate_at: Date | null }>(
    `SELECT id, next_fire_at, generate_at FROM schedules
      WHERE state = 'ACTIVE' AND next_fire_at < now() - $1 * interval '1 ms'
        AND (generate_at IS NULL OR generate_at > now())
      ORDER BY next_fire_at LIMIT $2`,
    [graceMs, limit],
  );
  return r.rows.map((x) => ({ id: x.id, nextFireAt: x.next_fire_at, generateAt: x.generate_at }));
}

/**
 * Asks the generator to look at these schedules now (the same field every change sets); only
 * while they are still stalled, so a generator that moved on meanwhile is not overridden.
 * Returns how many were nudged.
 */
export async function nudgeSchedules(
  db: Queryable,
  ids: readonly string[],
  graceMs: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.query(
    `UPDATE schedules SET generate_at = now()
      WHERE id = ANY($1::uuid[]) AND state = 'ACTIVE' AND next_fire_at < now() - $2 * interval '1 ms'
        AND (generate_at IS NULL OR generate_at > now())`,
    [ids, graceMs],
  );
  return r.rowCount ?? 0;
}
