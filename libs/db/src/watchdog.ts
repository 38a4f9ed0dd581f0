import { CANARY_TENANT, type Job } from '@kairos/core';
import type pg from 'pg';
import { toJob, type JobDbRow } from './jobs.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Where a watchdog scan left off: the last row it returned, in the scan's order. */
export interface ScanCursor {
  readonly at: Date;
  readonly id: string;
}

/** A page of a watchdog scan, and where the next one starts (null: the scan is through; start over). */
export interface ScanPage {
  readonly jobs: Job[];
  readonly next: ScanCursor | null;
}

function page(rows: readonly (JobDbRow & { scan_at: Date })[], limit: number): ScanPage {
  const last = rows.at(-1);
  return {
    jobs: rows.map(toJob),
    next: rows.length === limit && last ? { at: last.scan_at, id: last.id } : null,
  };
}

/**
 * SCHEDULED jobs due more than `graceMs` ago (PostgreSQL's clock), after `after` in (due_at, id)
 * order, at most `limit`: per shard a bounded range of the (shard, due_at) SCHEDULED index
 * (LATERAL, so each shard stops at `limit`), merged. Scanning on from a cursor across rounds, a
 * backlog of jobs that are merely late (still in a hot set) cannot hide lost ones behind it.
 * Canaries are left out: a lost canary is what the canary alert is for.
 */
export async function overdueScheduledJobs(
  db: Queryable,
  shards: number,
  graceMs: number,
  limit: number,
  after: ScanCursor | null = null,
): Promise<ScanPage> {
  const r = await db.query<JobDbRow & { scan_at: Date }>(
    `SELECT j.*, j.due_at AS scan_at FROM generate_series(0, $1::int - 1) AS s(shard)
       CROSS JOIN LATERAL (
         SELECT * FROM jobs
          WHERE shard = s.shard AND state = 'SCHEDULED' AND due_at < now() - $2 * interval '1 ms'
            AND tenant_id <> $4 AND ($5::timestamptz IS NULL OR (due_at, id) > ($5::timestamptz, $6::uuid))
          ORDER BY due_at, id LIMIT $3) j
      ORDER BY j.due_at, j.id LIMIT $3`,
    [shards, graceMs, limit, CANARY_TENANT, after?.at ?? null, after?.id ?? null],
  );
  return page(r.rows, limit);
}

/**
 * Jobs in `state` (QUEUED or RUNNING) whose last change is older than `idleMs`, after `after` in
 * (updated_at, id) order, at most `limit`, from the live index (in-flight jobs only).
 */
export async function idleLiveJobs(
  db: Queryable,
  state: 'QUEUED' | 'RUNNING',
  idleMs: number,
  limit: number,
  after: ScanCursor | null = null,
): Promise<ScanPage> {
  const r = await db.query<JobDbRow & { scan_at: Date }>(
    `SELECT *, updated_at AS scan_at FROM jobs
      WHERE state = $1 AND updated_at < now() - $2 * interval '1 ms' AND tenant_id <> $4
        AND ($5::timestamptz IS NULL OR (updated_at, id) > ($5::timestamptz, $6::uuid))
      ORDER BY updated_at, id LIMIT $3`,
    [state, idleMs, limit, CANARY_TENANT, after?.at ?? null, after?.id ?? null],
  );
  return page(r.rows, limit);
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
