import type { LagMinute } from '@kairos/core';
import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * Adds an instance's class-minutes of dispatch lag to dispatch_lag_minutes in one statement
 * (buckets summed elementwise with what an earlier flush of the same minute wrote).
 */
export async function addLagMinutes(
  db: Queryable,
  instance: string,
  rows: readonly LagMinute[],
): Promise<void> {
  if (rows.length === 0) return;
  // A 2-D array cannot be unnested row by row: buckets travel as one text literal per row.
  await db.query(
    `INSERT INTO dispatch_lag_minutes AS d (minute, resource_class, instance, buckets, count, sum_ms, max_ms)
     SELECT to_timestamp(m / 1000.0), c, $1, b::bigint[], n, s, x
       FROM unnest($2::float8[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::float8[])
         AS r(m, c, b, n, s, x)
     ON CONFLICT (minute, resource_class, instance) DO UPDATE
       SET buckets = ARRAY(SELECT o + e FROM unnest(d.buckets, EXCLUDED.buckets) WITH ORDINALITY AS z(o, e, i) ORDER BY i),
           count = d.count + EXCLUDED.count,
           sum_ms = d.sum_ms + EXCLUDED.sum_ms,
           max_ms = GREATEST(d.max_ms, EXCLUDED.max_ms)`,
    [
      instance,
      rows.map((r) => r.minuteMs),
      rows.map((r) => r.resourceClass),
      rows.map((r) => `{${r.buckets.join(',')}}`),
      rows.map((r) => r.count),
      rows.map((r) => r.sumMs),
      rows.map((r) => r.maxMs),
    ],
  );
}

/** Deletes the minutes before `before` (the history is a chart of the recent past). Returns how many rows went. */
export async function pruneLagMinutes(db: Queryable, before: Date): Promise<number> {
  const r = await db.query('DELETE FROM dispatch_lag_minutes WHERE minute < $1', [before]);
  return r.rowCount ?? 0;
}

/**
 * Every instance's rows of the last `minutes` minutes (by PostgreSQL's clock), a range of the
 * primary key; callers merge them (mergeLagMinutes).
 */
export async function readLagMinutes(db: Queryable, minutes: number): Promise<Omit<LagMinute, 'sumMs'>[]> {
  const r = await db.query<{
    minute_ms: number;
    resource_class: string;
    buckets: string[];
    count: string;
    max_ms: number;
  }>(
    `SELECT (extract(epoch FROM minute) * 1000)::float8 AS minute_ms, resource_class, buckets, count, max_ms
       FROM dispatch_lag_minutes
      WHERE minute >= date_trunc('minute', now()) - ($1::int - 1) * interval '1 minute'`,
    [minutes],
  );
  return r.rows.map((row) => ({
    resourceClass: row.resource_class,
    minuteMs: row.minute_ms,
    buckets: row.buckets.map(Number),
    count: Number(row.count),
    maxMs: row.max_ms,
  }));
}
