import { DEFAULT_RETRY_BACKOFF, type Job } from '@kairos/core';
import type pg from 'pg';
import {
  idempotencyMapKey,
  JOB_ROW_COLUMNS,
  toJob,
  type JobDbRow,
  type NewJobRow,
  type OutboxRow,
} from './jobs.js';
import { noteOutboxWritten, outboxCommitted } from './outbox-relay.js';
import { sweepOutboxSoon } from './outbox-sweeper.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

// The statements of every create are prepared once per connection (named): planning the insert
// into the partitioned jobs table cost more than executing it (0.4 of 0.7 ms for one job).

/** Columns of a job insert with the array type each travels as (one array per column, unnested). */
const JOB_COLUMNS = [
  ['id', 'uuid'],
  ['tenant_id', 'text'],
  ['idempotency_key', 'text'],
  ['type', 'text'],
  ['resource_class', 'text'],
  ['payload', 'text'],
  ['due_at', 'timestamptz'],
  ['deadline_at', 'timestamptz'],
  ['max_attempts', 'int'],
  ['routing_key', 'text'],
  ['shard', 'int'],
  ['retry_base_ms', 'int'],
  ['retry_cap_ms', 'int'],
  ['retry_jitter_ms', 'int'],
  ['schedule_id', 'uuid'],
  ['occurrence_id', 'uuid'],
  ['occurrence_at', 'timestamptz'],
  ['occurrence_kind', 'text'],
  ['misfire_after', 'timestamptz'],
  ['traceparent', 'text'],
] as const;

const OUTBOX_COLUMNS = [
  ['id', 'uuid'],
  ['aggregatetype', 'text'],
  ['aggregateid', 'text'],
  ['type', 'text'],
  ['payload', 'bytea'],
  ['job_id', 'text'],
  ['tenant_id', 'text'],
  ['due_at', 'text'],
  ['traceparent', 'text'],
] as const;

/** `unnest($1::uuid[], …) AS alias(id, …)`, its parameters numbered from `from`. */
function unnest(columns: readonly (readonly [string, string])[], alias: string, from = 1): string {
  const arrays = columns.map(([, type], i) => `$${from + i}::${type}[]`).join(', ');
  return `unnest(${arrays}) AS ${alias}(${columns.map(([name]) => name).join(', ')})`;
}

/** INSERT INTO jobs … SELECT from a relation `t` with the columns of JOB_COLUMNS. */
const INSERT_JOBS = `INSERT INTO jobs (${JOB_COLUMNS.map(([name]) => name).join(', ')}, state)
  SELECT ${JOB_COLUMNS.map(([name]) => (name === 'payload' ? 'payload::jsonb' : name)).join(', ')}, 'SCHEDULED'
  FROM t`;
const INSERT_OUTBOX = `INSERT INTO outbox (${OUTBOX_COLUMNS.map(([name]) => name).join(', ')})`;

function jobParams(rows: readonly NewJobRow[]): unknown[] {
  const retry = (r: NewJobRow) => r.retry ?? DEFAULT_RETRY_BACKOFF;
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.tenantId),
    rows.map((r) => r.idempotencyKey),
    rows.map((r) => r.type),
    rows.map((r) => r.resourceClass),
    rows.map((r) => r.payload),
    rows.map((r) => r.dueAt),
    rows.map((r) => r.deadlineAt),
    rows.map((r) => r.maxAttempts),
    rows.map((r) => r.routingKey),
    rows.map((r) => r.shard),
    rows.map((r) => retry(r).baseMs),
    rows.map((r) => retry(r).capMs),
    rows.map((r) => retry(r).jitterMs),
    rows.map((r) => r.occurrence?.scheduleId ?? null),
    rows.map((r) => r.occurrence?.occurrenceId ?? null),
    rows.map((r) => r.occurrence?.occurrenceAt ?? null),
    rows.map((r) => r.occurrence?.kind ?? null),
    rows.map((r) => r.occurrence?.misfireAfter ?? null),
    rows.map((r) => r.traceparent),
  ];
}

function outboxParams(rows: readonly OutboxRow[]): unknown[] {
  return [
    rows.map((r) => r.id),
    rows.map((r) => r.aggregateType),
    rows.map((r) => r.aggregateId),
    rows.map((r) => r.type),
    rows.map((r) => r.payload),
    rows.map((r) => r.jobId),
    rows.map((r) => r.tenantId),
    rows.map((r) => String(r.dueAt.getTime())),
    rows.map((r) => r.traceparent),
  ];
}

/** Inserts jobs in state SCHEDULED (one statement for the whole batch) and returns them as stored. */
export async function insertJobs(db: Queryable, rows: readonly NewJobRow[]): Promise<Job[]> {
  if (rows.length === 0) return [];
  const r = await db.query<JobDbRow>({
    name: 'kairos-insert-jobs',
    text: `WITH t AS (SELECT * FROM ${unnest(JOB_COLUMNS, 't')}) ${INSERT_JOBS} RETURNING ${JOB_ROW_COLUMNS}`,
    values: jobParams(rows),
  });
  return r.rows.map(toJob);
}

/**
 * Creates jobs with their events in one statement, its own transaction (one round trip for a
 * whole create, no BEGIN, delete or COMMIT): claims each row's per-tenant idempotency key,
 * inserts the rows whose key it claimed (or that have none) and, for exactly those, their outbox
 * rows (`events`, matched by job id). Returns the jobs inserted, as stored, once committed; their
 * events go to the pool's outbox publisher and their outbox rows are deleted soon after (Debezium
 * reads the inserts from the WAL; a later delete changes nothing it sends). A row whose key was
 * already held is neither inserted nor published; jobsOfIdempotencyKeys then finds its job (in a
 * later statement: this one's snapshot may predate the holder's commit it waited for). Rows must
 * carry distinct keys.
 */
export async function insertJobsCommitted(
  pool: pg.Pool,
  rows: readonly NewJobRow[],
  events: readonly OutboxRow[],
): Promise<Job[]> {
  if (rows.length === 0) return [];
  const r = await pool.query<JobDbRow>({
    name: 'kairos-insert-jobs-with-events',
    text: `WITH t AS (SELECT * FROM ${unnest(JOB_COLUMNS, 't')}),
     claimed AS (
       INSERT INTO job_idempotency (tenant_id, idempotency_key, job_id, due_at)
       SELECT tenant_id, idempotency_key, id, due_at FROM t WHERE idempotency_key IS NOT NULL
       ORDER BY 1, 2 -- one key order for every transaction, so concurrent ones cannot deadlock
       ON CONFLICT DO NOTHING
       RETURNING job_id
     ),
     inserted AS (
       ${INSERT_JOBS} WHERE t.idempotency_key IS NULL OR t.id IN (SELECT job_id FROM claimed)
       RETURNING ${JOB_ROW_COLUMNS}
     ),
     published AS (
       ${INSERT_OUTBOX} SELECT * FROM ${unnest(OUTBOX_COLUMNS, 'o', JOB_COLUMNS.length + 1)}
       WHERE o.job_id IN (SELECT id::text FROM inserted)
     )
     SELECT * FROM inserted`,
    values: [...jobParams(rows), ...outboxParams(events)],
  });
  const jobs = r.rows.map(toJob);
  const inserted = new Set(jobs.map((j) => j.id));
  const published = events.filter((e) => inserted.has(e.jobId));
  outboxCommitted(pool, published);
  sweepOutboxSoon(
    pool,
    published.map((e) => e.id),
  );
  return jobs;
}

/**
 * The jobs that hold these per-tenant idempotency keys, by idempotencyMapKey (a key whose job
 * does not exist is missing from the map).
 */
export async function jobsOfIdempotencyKeys(
  db: Queryable,
  keys: readonly { readonly tenantId: string; readonly idempotencyKey: string }[],
): Promise<Map<string, Job>> {
  if (keys.length === 0) return new Map();
  const r = await db.query<JobDbRow & { key_tenant: string; key_name: string }>(
    `SELECT j.*, i.tenant_id AS key_tenant, i.idempotency_key AS key_name FROM job_idempotency i
     JOIN unnest($1::text[], $2::text[]) AS k(tenant_id, idempotency_key) USING (tenant_id, idempotency_key)
     JOIN jobs j ON j.id = i.job_id`,
    [keys.map((k) => k.tenantId), keys.map((k) => k.idempotencyKey)],
  );
  return new Map(r.rows.map((row) => [idempotencyMapKey(row.key_tenant, row.key_name), toJob(row)]));
}

/**
 * Writes outbox rows and deletes them in the same transaction: Debezium reads the inserts from
 * the WAL, and the table never grows.
 */
export async function writeOutbox(db: Queryable, rows: readonly OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query({
    name: 'kairos-write-outbox',
    text: `${INSERT_OUTBOX} SELECT * FROM ${unnest(OUTBOX_COLUMNS, 'o')}`,
    values: outboxParams(rows),
  });
  noteOutboxWritten(db, rows);
  await deleteOutbox(
    db,
    rows.map((r) => r.id),
  );
}

/** Deletes outbox rows written earlier in the same transaction (the WAL keeps their inserts). */
export async function deleteOutbox(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query({
    name: 'kairos-delete-outbox',
    text: 'DELETE FROM outbox WHERE id = ANY($1::uuid[])',
    values: [ids],
  });
}
