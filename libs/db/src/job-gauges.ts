import { CANARY_TENANT } from '@kairos/core';
import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** Live jobs by state and class, dead letters by class, the oldest overdue job, the forecast. */
export interface JobGaugeReadings {
  /** SCHEDULED, QUEUED and RUNNING jobs by class (terminal states are history, not gauges). */
  readonly live: readonly { state: string; resourceClass: string; jobs: number }[];
  /** FAILED (dead-lettered) jobs held in PostgreSQL, by class. */
  readonly deadLetters: readonly { resourceClass: string; jobs: number }[];
  /** Per class, how long its oldest SCHEDULED job has been due, seconds (classes with none: absent). */
  readonly oldestOverdue: readonly { resourceClass: string; seconds: number }[];
  /** Per class, SCHEDULED jobs due within each window from now (same order as the windows asked). */
  readonly dueWithin: readonly { resourceClass: string; jobs: readonly number[] }[];
  /** PostgreSQL's clock at the reading. */
  readonly now: Date;
}

/**
 * Live jobs (QUEUED, RUNNING, SCHEDULED) and dead letters (FAILED) counted by state and `keys`
 * (columns of jobs), each from a partial index alone: jobs_live_idx, the pre-loader's SCHEDULED
 * index and jobs_failed_class_tenant_idx (0011, 0014), so the history is never read. `live` and
 * `failed` are further conditions (`AND …`) of the live states and of FAILED.
 */
function stateCountsSql(keys: readonly string[], live: string, failed: string): string {
  const k = keys.join(', ');
  return `SELECT state, ${k}, count(*)::text AS n
       FROM jobs WHERE state IN ('QUEUED', 'RUNNING') ${live} GROUP BY state, ${k}
     UNION ALL
     SELECT 'SCHEDULED', ${k}, count(*)::text FROM jobs WHERE state = 'SCHEDULED' ${live} GROUP BY ${k}
     UNION ALL
     SELECT 'FAILED', ${k}, count(*)::text FROM jobs WHERE state = 'FAILED' ${failed} GROUP BY ${k}`;
}

/** Jobs of a tenant in a state and class (live states and FAILED only). */
export interface TenantJobCount {
  readonly tenant: string;
  readonly state: 'SCHEDULED' | 'QUEUED' | 'RUNNING' | 'FAILED';
  readonly resourceClass: string;
  readonly jobs: number;
}

/** The statement of countLiveJobs (the plan test explains it). */
export function liveJobCountsStatement(tenant?: string): { text: string; values: unknown[] } {
  const where = tenant === undefined ? 'AND tenant_id <> $1' : 'AND tenant_id = $1';
  return {
    text: `${stateCountsSql(['tenant_id', 'resource_class'], where, where)} ORDER BY 2, 3, 1`,
    values: [tenant ?? CANARY_TENANT],
  };
}

/**
 * Live jobs and dead letters by tenant, state and class (of one tenant, or of every tenant but the
 * canaries'), each from an index alone (stateCountsSql).
 */
export async function countLiveJobs(db: Queryable, tenant?: string): Promise<TenantJobCount[]> {
  const { text, values } = liveJobCountsStatement(tenant);
  const r = await db.query<{
    state: TenantJobCount['state'];
    tenant_id: string;
    resource_class: string;
    n: string;
  }>(text, values);
  return r.rows.map((x) => ({
    tenant: x.tenant_id,
    state: x.state,
    resourceClass: x.resource_class,
    jobs: Number(x.n),
  }));
}

/**
 * The gauges' readings in one round trip, each from an index alone (migration 0011): the live
 * index holds only in-flight jobs, the failed index only dead letters (stateCountsSql), and the SCHEDULED index is
 * read per shard (`shard = ANY`: a descent per shard) over the overdue range and the forecast's
 * horizon only. Counting every SCHEDULED job reads that whole partial index: bounded by the jobs
 * waiting, never by the history. Canaries are not tenant work and are left out.
 */
export async function readJobGauges(
  db: Queryable,
  shards: number,
  windowsMs: readonly number[],
): Promise<JobGaugeReadings> {
  // Ascending thresholds: a job's bucket b (0-based) means it is due within every window from the b-th on.
  const sorted = [...new Set(windowsMs)].sort((a, b) => a - b);
  const horizon = sorted.at(-1) ?? 0;
  const r = await db.query<{
    kind: string;
    state: string | null;
    cls: string;
    n: string;
    extra: number[] | null;
  }>(
    `WITH t AS (SELECT now() AS now)
     SELECT CASE WHEN state = 'FAILED' THEN 'failed' ELSE 'live' END AS kind, state,
            resource_class AS cls, n, NULL::float8[] AS extra
       FROM (${stateCountsSql(['resource_class'], 'AND tenant_id <> $3', '')}) c
     UNION ALL
     SELECT 'overdue', NULL, resource_class, '0',
            ARRAY[extract(epoch FROM (SELECT now FROM t) - min(due_at))::float8]
       FROM jobs WHERE shard = ANY(ARRAY(SELECT generate_series(0, $1::int - 1))) AND state = 'SCHEDULED'
        AND due_at <= (SELECT now FROM t) AND tenant_id <> $3
      GROUP BY resource_class
     UNION ALL
     SELECT 'due', NULL, resource_class, count(*)::text,
            ARRAY[width_bucket(extract(epoch FROM due_at - (SELECT now FROM t)) * 1000, $2::float8[])::float8]
       FROM jobs WHERE shard = ANY(ARRAY(SELECT generate_series(0, $1::int - 1))) AND state = 'SCHEDULED' AND tenant_id <> $3
        AND due_at > (SELECT now FROM t) AND due_at < (SELECT now FROM t) + $4 * interval '1 ms'
      GROUP BY resource_class, 5
     UNION ALL
     SELECT 'now', NULL, '', extract(epoch FROM (SELECT now FROM t))::text, NULL`,
    [shards, sorted, CANARY_TENANT, horizon],
  );
  return toReadings(r.rows, windowsMs, sorted);
}

function toReadings(
  rows: readonly { kind: string; state: string | null; cls: string; n: string; extra: number[] | null }[],
  windowsMs: readonly number[],
  sorted: readonly number[],
): JobGaugeReadings {
  const live: JobGaugeReadings['live'][number][] = [];
  const deadLetters: JobGaugeReadings['deadLetters'][number][] = [];
  const oldestOverdue: JobGaugeReadings['oldestOverdue'][number][] = [];
  const due = new Map<string, number[]>();
  let now = new Date();
  for (const row of rows) {
    const n = Number(row.n);
    if (row.kind === 'live') live.push({ state: row.state ?? '', resourceClass: row.cls, jobs: n });
    else if (row.kind === 'failed') deadLetters.push({ resourceClass: row.cls, jobs: n });
    else if (row.kind === 'overdue')
      oldestOverdue.push({ resourceClass: row.cls, seconds: row.extra?.[0] ?? 0 });
    else if (row.kind === 'due') addBucket(due, row.cls, row.extra?.[0] ?? 0, n, windowsMs, sorted);
    else if (row.kind === 'now') now = new Date(n * 1000);
  }
  const dueWithin = [...due].map(([resourceClass, jobs]) => ({ resourceClass, jobs }));
  return { live, deadLetters, oldestOverdue, dueWithin, now };
}

/** Adds a bucket's count to each window (caller's order) whose length exceeds the bucket's start. */
function addBucket(
  due: Map<string, number[]>,
  resourceClass: string,
  bucket: number,
  n: number,
  windowsMs: readonly number[],
  sorted: readonly number[],
): void {
  let counts = due.get(resourceClass);
  if (!counts) due.set(resourceClass, (counts = windowsMs.map(() => 0)));
  windowsMs.forEach((w, i) => {
    if (sorted.indexOf(w) >= bucket) counts[i] = (counts[i] ?? 0) + n;
  });
}
