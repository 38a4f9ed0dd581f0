import { parseJobSearch } from '@kairos/core';
import {
  countJobs,
  countLiveJobs,
  ensureJobPartitions,
  liveJobCountsStatement,
  migrate,
  searchStatement,
} from '@kairos/db';
import type pg from 'pg';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';

// The search is served by indexes: on a table of 1,000,000 jobs (50 tenants, 40 types, four
// classes, a realistic mix of states over three monthly partitions), no filter of GET /v1/jobs,
// no page after the first and no count reads a partition that holds rows sequentially.

const ROWS = 1_000_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The relations a statement reads with a sequential scan, leaving out empty partitions. */
async function seqScans(
  pool: pg.Pool,
  text: string,
  values: unknown[],
  nonEmpty: Set<string>,
): Promise<string[]> {
  const r = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
  const plan = r.rows[0]!['QUERY PLAN'][0].Plan;
  return nodes(plan)
    .filter((n) => n['Node Type'] === 'Seq Scan' && nonEmpty.has(n['Relation Name'] ?? ''))
    .map((n) => n['Relation Name'] ?? '?');
}

test(`no sequential scan for any search filter on ${ROWS.toLocaleString('en')} jobs`, async () => {
  const ns = await useNamespace('job-search-plans');
  const pool = ns.pgPool(2);
  ns.defer(() => pool.end());
  await migrate(pool);
  await ensureJobPartitions(pool, new Date());
  // Due times over this month and the next two; created over the last ~28 h; states as a live
  // deployment has them (mostly finished).
  await pool.query(
    `INSERT INTO jobs (id, tenant_id, type, resource_class, payload, due_at, state, max_attempts, routing_key,
                       shard, created_at, finished_at, last_error, last_failure_class, schedule_id)
     SELECT gen_random_uuid(), 't' || (g % 50), 'type.' || (g % 40), (ARRAY['critical','default','cpu','io'])[g % 4 + 1],
            '{}'::jsonb, date_trunc('month', now()) + ((g * 7) % 7776000) * interval '1 second', s.state, 3, 'r', g % 8,
            now() - ($1 - g) * interval '100 milliseconds',
            CASE WHEN s.state IN ('SUCCEEDED','FAILED','CANCELLED') THEN now() - ($1 - g) * interval '90 milliseconds' END,
            CASE WHEN s.state = 'FAILED' THEN 'upstream said 503' END,
            CASE WHEN s.state = 'FAILED' THEN (ARRAY['transient','permanent','ambiguous'])[g % 3 + 1] END,
            CASE WHEN g % 10 = 0 THEN ('00000000-0000-4000-8000-' || lpad(to_hex(g % 1000), 12, '0'))::uuid END
     FROM generate_series(1, $1) g,
          LATERAL (SELECT CASE WHEN g % 100 < 80 THEN 'SUCCEEDED' WHEN g % 100 < 90 THEN 'SCHEDULED'
                               WHEN g % 100 < 95 THEN 'FAILED' ELSE 'CANCELLED' END AS state) s`,
    [ROWS],
  );
  // A day of dispatch lag history: four classes, three delay-tier instances.
  await pool.query(
    `INSERT INTO dispatch_lag_minutes (minute, resource_class, instance, buckets, count, sum_ms, max_ms)
     SELECT date_trunc('minute', now()) - m * interval '1 minute', c, 'tier-' || i,
            array_fill(1::bigint, ARRAY[38]), 38, 380, 10
     FROM generate_series(0, 1439) m, unnest(ARRAY['critical','default','cpu','io']) c, generate_series(1, 3) i`,
  );
  await pool.query('ANALYZE jobs');
  await pool.query('ANALYZE dispatch_lag_minutes');
  const parts = await pool.query<{ relname: string }>(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'jobs'::regclass AND c.reltuples > 0`,
  );
  const nonEmpty = new Set(parts.rows.map((r) => r.relname));
  expect(nonEmpty.size).toBeGreaterThanOrEqual(3);

  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const filters: Record<string, Record<string, string>> = {
    none: {},
    state: { state: 'FAILED' },
    'states (any of)': { state: 'SCHEDULED,CANCELLED' },
    type: { type: 'type.7' },
    'resource class': { resource_class: 'io' },
    schedule: { schedule_id: '00000000-0000-4000-8000-000000000064' },
    'due range': { due_after: iso(now + 86_400_000), due_before: iso(now + 2 * 86_400_000) },
    'created range': { created_after: iso(now - 3600_000), created_before: iso(now - 1800_000) },
    'finished range': { finished_after: iso(now - 3600_000), finished_before: iso(now - 1800_000) },
    'failure class': { failure_class: 'permanent' },
    'error text': { state: 'FAILED', error: '503' },
    'everything at once': { state: 'SUCCEEDED', type: 'type.3', resource_class: 'cpu', limit: '500' },
    'a later page': {
      state: 'SUCCEEDED',
      cursor: `${(BigInt(now) * 1000n).toString(36)}.00000000-0000-4000-8000-000000000000`,
    },
  };
  const found: Record<string, string[]> = {};
  for (const [name, query] of Object.entries(filters)) {
    const { text, values } = searchStatement(parseJobSearch({ ...query }, 't7'));
    found[name] = await seqScans(pool, text, values, nonEmpty);
  }
  const counts = 'SELECT state, resource_class, count(*) FROM jobs WHERE tenant_id = $1 GROUP BY 1, 2';
  found.counts = await seqScans(pool, counts, ['t7'], nonEmpty);
  // The overview's live counts, of one tenant and of every tenant (partial indexes only).
  for (const [name, tenant] of [
    ['overview counts', 't7'],
    ['overview counts, every tenant', undefined],
  ] as const) {
    const { text, values } = liveJobCountsStatement(tenant);
    found[name] = await seqScans(pool, text, values, nonEmpty);
  }
  found['lag history'] = await seqScans(
    pool,
    "SELECT * FROM dispatch_lag_minutes WHERE minute >= now() - interval '1 hour'",
    [],
    new Set(['dispatch_lag_minutes']),
  );
  expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])));
  // The check itself sees a sequential scan when there is one (no index on payload).
  expect(await seqScans(pool, "SELECT id FROM jobs WHERE payload->>'n' = '1'", [], nonEmpty)).not.toEqual([]);
  // And the count is right (the function the API calls).
  const byState = await countJobs(pool, 't7');
  expect(byState.reduce((n, c) => n + c.count, 0)).toBe(ROWS / 50);
  const live = await countLiveJobs(pool, 't7');
  expect(live.reduce((n, c) => n + c.jobs, 0)).toBe(
    byState.filter((c) => c.state === 'SCHEDULED' || c.state === 'FAILED').reduce((n, c) => n + c.count, 0),
  );
}, 600_000);
