import { CANARY_TENANT, type Job, type JobOccurrence, type JobState, type RetryBackoff } from '@kairos/core';
import type pg from 'pg';

/** A job row as the command handlers insert it. */
export interface NewJobRow {
  readonly id: string;
  readonly tenantId: string;
  readonly idempotencyKey: string | null;
  readonly type: string;
  readonly resourceClass: string;
  readonly payload: string;
  readonly dueAt: Date;
  readonly deadlineAt: Date | null;
  readonly maxAttempts: number;
  /** Backoff between attempts. Default: DEFAULT_RETRY_BACKOFF. */
  readonly retry?: RetryBackoff;
  readonly routingKey: string;
  readonly shard: number;
  /** A run of a recurring schedule: its occurrence, and when it misfires if still waiting. */
  readonly occurrence?: NewOccurrenceJob;
  /** W3C trace context the job keeps for every attempt (see traceparentOrNew). */
  readonly traceparent: string | null;
}

export interface NewOccurrenceJob extends JobOccurrence {
  /** Still SCHEDULED after this, the run waits for the misfire decision (null: never). */
  readonly misfireAfter: Date | null;
}

/** An outbox row in the Debezium Outbox Event Router layout, plus the columns that become headers. */
export interface OutboxRow {
  readonly id: string;
  /** Routes the event: the connector maps it to a topic (e.g. `job-events` → `kairos.job-events`). */
  readonly aggregateType: string;
  /** Becomes the Kafka message key: the routing key. */
  readonly aggregateId: string;
  /** Event type, a header. */
  readonly type: string;
  /** Avro in the Confluent wire format, passed through unchanged. */
  readonly payload: Buffer;
  readonly jobId: string;
  readonly tenantId: string;
  readonly dueAt: Date;
  readonly traceparent: string | null;
}

export interface JobDbRow {
  id: string;
  tenant_id: string;
  idempotency_key: string | null;
  type: string;
  resource_class: string;
  payload: unknown;
  due_at: Date;
  deadline_at: Date | null;
  state: JobState;
  version: number;
  fence: number;
  attempt: number;
  max_attempts: number;
  retry_base_ms: number;
  retry_cap_ms: number;
  retry_jitter_ms: number;
  routing_key: string;
  shard: number;
  created_at: Date;
  dispatched_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  last_error: string | null;
  /** Since migration 0009. */
  last_failure_class?: string | null;
  /** Since migration 0010. */
  replay_of?: string | null;
  /** Since migration 0006. */
  schedule_id?: string | null;
  occurrence_id?: string | null;
  occurrence_at?: Date | null;
  occurrence_kind?: string | null;
  /** Since migration 0013. */
  traceparent?: string | null;
}

/**
 * The columns of a JobDbRow, for statements that name them instead of `*`: the result of a
 * prepared statement must keep its shape, so a migration adding a column cannot break it.
 */
export const JOB_ROW_COLUMNS = (
  [
    'id',
    'tenant_id',
    'idempotency_key',
    'type',
    'resource_class',
    'payload',
    'due_at',
    'deadline_at',
    'state',
    'version',
    'fence',
    'attempt',
    'max_attempts',
    'retry_base_ms',
    'retry_cap_ms',
    'retry_jitter_ms',
    'routing_key',
    'shard',
    'created_at',
    'dispatched_at',
    'started_at',
    'finished_at',
    'last_error',
    'last_failure_class',
    'replay_of',
    'schedule_id',
    'occurrence_id',
    'occurrence_at',
    'occurrence_kind',
    'traceparent',
  ] as const satisfies readonly (keyof JobDbRow)[]
).join(', ');

/** JOB_ROW_COLUMNS qualified by a table alias (`j.id, j.tenant_id, …`), for joins. */
export const jobRowColumnsOf = (alias: string): string =>
  JOB_ROW_COLUMNS.split(', ')
    .map((c) => `${alias}.${c}`)
    .join(', ');

export function toJob(r: JobDbRow): Job {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    idempotencyKey: r.idempotency_key,
    type: r.type,
    resourceClass: r.resource_class,
    payload: JSON.stringify(r.payload),
    dueAt: r.due_at,
    deadlineAt: r.deadline_at,
    state: r.state,
    version: r.version,
    fence: r.fence,
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    retry: { baseMs: r.retry_base_ms, capMs: r.retry_cap_ms, jitterMs: r.retry_jitter_ms },
    routingKey: r.routing_key,
    shard: r.shard,
    createdAt: r.created_at,
    dispatchedAt: r.dispatched_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    lastError: r.last_error,
    lastFailureClass: r.last_failure_class ?? null,
    replayOf: r.replay_of ?? null,
    occurrence:
      r.schedule_id && r.occurrence_id && r.occurrence_at
        ? {
            scheduleId: r.schedule_id,
            occurrenceId: r.occurrence_id,
            occurrenceAt: r.occurrence_at,
            kind: r.occurrence_kind ?? 'regular',
          }
        : null,
    traceparent: r.traceparent ?? null,
  };
}

type Queryable = Pick<pg.PoolClient, 'query'>;

export function idempotencyMapKey(tenantId: string, key: string): string {
  return `${tenantId}\u0000${key}`;
}

export async function findJobs(db: Queryable, ids: readonly string[]): Promise<Job[]> {
  if (ids.length === 0) return [];
  const r = await db.query<JobDbRow>('SELECT * FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
  return r.rows.map(toJob);
}

export async function findJob(db: Queryable, id: string): Promise<Job | undefined> {
  return (await findJobs(db, [id]))[0];
}

/**
 * Cancels a SCHEDULED job: bumps its version (so the hot tier drops any older entry) and returns
 * the updated job, or undefined when it is not SCHEDULED (the caller reports its state).
 */
export async function cancelScheduledJob(db: Queryable, id: string): Promise<Job | undefined> {
  return cancelJobIn(db, id, ['SCHEDULED']);
}

/**
 * Cancels a job that has not finished: SCHEDULED, QUEUED (dispatched, waiting for a worker) or
 * RUNNING. The version goes up; its event reaches the hot tier, where a worker's claim of a queued
 * task and a running attempt's heartbeat see it (the task is discarded, the handler aborted).
 */
export async function cancelUnfinishedJob(db: Queryable, id: string): Promise<Job | undefined> {
  return cancelJobIn(db, id, ['SCHEDULED', 'QUEUED', 'RUNNING']);
}

async function cancelJobIn(db: Queryable, id: string, states: readonly JobState[]): Promise<Job | undefined> {
  const r = await db.query<JobDbRow>(
    `UPDATE jobs SET state = 'CANCELLED', version = version + 1, finished_at = now(), updated_at = now()
     WHERE id = $1 AND state = ANY($2::text[]) RETURNING *`,
    [id, states],
  );
  return r.rows[0] ? toJob(r.rows[0]) : undefined;
}

/**
 * One bounded page of a shard's SCHEDULED jobs in due order, after the (dueAt, id) cursor and
 * due by `until` (the lookahead horizon): the (shard, due_at) partial index serves it without a
 * full scan. Canaries are left out: they watch the event path (outbox → Debezium → job-events),
 * and hydrating them from here would hide a stalled connector from them.
 */
export async function scheduledJobsPage(
  db: Queryable,
  shard: number,
  after: { dueAt: Date; id: string } | null,
  limit: number,
  until: Date | null = null,
): Promise<Job[]> {
  const r = await db.query<JobDbRow>(
    `SELECT * FROM jobs
     WHERE shard = $1 AND state = 'SCHEDULED'
       AND ($2::timestamptz IS NULL OR (due_at, id) > ($2::timestamptz, $3::uuid))
       AND ($5::timestamptz IS NULL OR due_at <= $5::timestamptz)
       AND tenant_id <> $6
     ORDER BY due_at, id
     LIMIT $4`,
    [shard, after?.dueAt ?? null, after?.id ?? null, limit, until, CANARY_TENANT],
  );
  return r.rows.map(toJob);
}

/**
 * Moves a SCHEDULED job to a new due time (and deadline): bumps its version so the hot tier
 * replaces the old entry, and returns the updated job, or undefined when it is not SCHEDULED.
 * The row may move to another monthly partition (due_at is the partition key).
 */
export async function rescheduleScheduledJob(
  db: Queryable,
  id: string,
  dueAt: Date,
  deadlineAt: Date | null,
): Promise<Job | undefined> {
  const r = await db.query<JobDbRow>(
    `UPDATE jobs SET due_at = $2, deadline_at = $3, version = version + 1, updated_at = now(),
                     misfire_after = NULL -- a run of a schedule moved by hand is not judged a misfire
     WHERE id = $1 AND state = 'SCHEDULED' RETURNING *`,
    [id, dueAt, deadlineAt],
  );
  const job = r.rows[0] ? toJob(r.rows[0]) : undefined;
  if (job?.idempotencyKey) {
    await db.query('UPDATE job_idempotency SET due_at = $3 WHERE tenant_id = $1 AND idempotency_key = $2', [
      job.tenantId,
      job.idempotencyKey,
      dueAt,
    ]);
  }
  return job;
}

/** The owner and epoch PostgreSQL holds for a job-events partition. */
export async function partitionOwner(
  db: Queryable,
  partition: number,
): Promise<{ epoch: number; owner: string } | undefined> {
  const r = await db.query<{ epoch: number; owner: string }>(
    'SELECT epoch, owner FROM partition_epochs WHERE partition = $1',
    [partition],
  );
  return r.rows[0];
}
