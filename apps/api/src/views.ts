import type { Job } from '@kairos/core';

/** The JSON shape of a job in every response (snake_case, ISO-8601 times). */
export function jobView(job: Job) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: job.id,
    tenant: job.tenantId,
    type: job.type,
    resource_class: job.resourceClass,
    payload: JSON.parse(job.payload) as unknown,
    state: job.state,
    due_at: job.dueAt.toISOString(),
    deadline_at: iso(job.deadlineAt),
    idempotency_key: job.idempotencyKey,
    max_attempts: job.maxAttempts,
    retry: { base_ms: job.retry.baseMs, cap_ms: job.retry.capMs, jitter_ms: job.retry.jitterMs },
    attempt: job.attempt,
    fence: job.fence,
    version: job.version,
    shard: job.shard,
    created_at: job.createdAt.toISOString(),
    dispatched_at: iso(job.dispatchedAt),
    started_at: iso(job.startedAt),
    finished_at: iso(job.finishedAt),
    last_error: job.lastError,
  };
}
