import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** The latest successful canary of a class: when it finished and how long it took end to end. */
export interface CanarySuccess {
  readonly resourceClass: string;
  readonly jobId: string;
  /** When the tracker recorded its success (PostgreSQL's clock: a worker's may be off). */
  readonly finishedAt: Date;
  /** Creation → SUCCEEDED recorded by the tracker, ms (both on PostgreSQL's clock, not a worker's). */
  readonly latencyMs: number;
}

/**
 * The newest SUCCEEDED canary per class among those created since `since`: an index range of the
 * canary tenant (jobs_tenant_state_idx), its due time bound pruning old partitions.
 */
export async function latestCanarySuccesses(
  db: Queryable,
  tenant: string,
  type: string,
  since: Date,
): Promise<CanarySuccess[]> {
  const r = await db.query<{ resource_class: string; id: string; finished_at: Date; latency_ms: number }>(
    `SELECT DISTINCT ON (resource_class) resource_class, id, updated_at AS finished_at,
            (extract(epoch FROM updated_at - created_at) * 1000)::float8 AS latency_ms
       FROM jobs
      WHERE tenant_id = $1 AND state = 'SUCCEEDED' AND created_at >= $3 AND due_at >= $3 AND type = $2
      ORDER BY resource_class, updated_at DESC`,
    [tenant, type, since],
  );
  return r.rows.map((x) => ({
    resourceClass: x.resource_class,
    jobId: x.id,
    finishedAt: x.finished_at,
    latencyMs: x.latency_ms,
  }));
}

/**
 * Deletes canaries due before `before` with their attempts and idempotency keys (canaries are
 * probes, not history): finished ones, and SCHEDULED ones a failover left unloaded (the pre-loader
 * does not hydrate canaries). One on its way to a worker stays until it ends. Returns how many went.
 */
export async function deleteOldCanaries(
  db: Queryable,
  tenant: string,
  type: string,
  before: Date,
): Promise<number> {
  const r = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM jobs
        WHERE tenant_id = $1 AND type = $2 AND due_at < $3
          AND state NOT IN ('QUEUED', 'RUNNING')
       RETURNING id),
     attempts_gone AS (DELETE FROM attempts WHERE job_id IN (SELECT id FROM gone)),
     keys_gone AS (DELETE FROM job_idempotency WHERE tenant_id = $1 AND job_id IN (SELECT id FROM gone))
     SELECT count(*)::int AS n FROM gone`,
    [tenant, type, before],
  );
  return r.rows[0]?.n ?? 0;
}

/**
 * When the oldest canary of each class created since `since` was created (when canaries began to
 * be sent, as far back as they are kept): the index range of the canary tenant and type
 * (jobs_tenant_type_idx), a handful of rows per class and period.
 */
export async function firstCanaries(
  db: Queryable,
  tenant: string,
  type: string,
  since: Date,
): Promise<Map<string, Date>> {
  const r = await db.query<{ resource_class: string; first: Date }>(
    `SELECT resource_class, min(created_at) AS first FROM jobs
      WHERE tenant_id = $1 AND type = $2 AND created_at >= $3 AND due_at >= $3
      GROUP BY resource_class`,
    [tenant, type, since],
  );
  return new Map(r.rows.map((x) => [x.resource_class, x.first]));
}
