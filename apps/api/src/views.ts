import {
  jitterOffsetMs,
  NO_RUN_FACTS,
  previewFireTimes,
  scheduleHealth,
  scheduleRequestOf,
  type Job,
  type PreviewEntry,
  type Schedule,
  type ScheduleRunFacts,
} from '@kairos/core';
import type { AttemptRow } from '@kairos/db';
import type { AttemptView, JobView, PreviewView } from './api-schemas.js';

/** The JSON shape of a job in every response (snake_case, ISO-8601 times). */
export function jobView(job: Job): JobView {
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
    last_failure_class: job.lastFailureClass,
    replay_of: job.replayOf,
    // A run of a recurring schedule: which schedule and occurrence (null for a one-time job).
    schedule_id: job.occurrence?.scheduleId ?? null,
    occurrence: job.occurrence
      ? {
          id: job.occurrence.occurrenceId,
          at: job.occurrence.occurrenceAt.toISOString(),
          kind: job.occurrence.kind,
        }
      : null,
    traceparent: job.traceparent ?? null,
  };
}

/** One attempt of a job: who ran it under which fence, how it ended. */
export function attemptView(a: AttemptRow): AttemptView {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    attempt: a.attempt,
    fence: a.fence,
    epoch: a.epoch,
    worker_id: a.workerId,
    outcome: a.outcome,
    failure_class: a.failureClass,
    error_class: a.errorClass,
    error_message: a.errorMessage,
    retry_after_ms: a.retryAfterMs,
    dispatched_at: iso(a.dispatchedAt),
    started_at: iso(a.startedAt),
    finished_at: iso(a.finishedAt),
    suppressed: a.suppressed,
  };
}

export function previewView(e: PreviewEntry): PreviewView {
  return { instant: e.instant, local: e.local, fire_at: e.fireAt, nominal: e.nominal, kind: e.kind };
}

/**
 * The JSON shape of a schedule: its rules as in a create request, plus state and progress, and
 * what happened to its runs (`facts`; none yet when absent).
 */
export function scheduleView(s: Schedule, facts: ScheduleRunFacts = NO_RUN_FACTS) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const { tenant, ...rules } = scheduleRequestOf(s);
  // The next fire time from now (absolute and local), whatever has been generated already.
  const next =
    s.state === 'ACTIVE'
      ? previewFireTimes(s, Date.now(), 1, jitterOffsetMs(s.tenantId, s.id, s.jitterMs))[0]
      : undefined;
  return {
    id: s.id,
    tenant,
    ...rules,
    start_at: iso(s.startAt),
    end_at: iso(s.endAt),
    idempotency_key: s.idempotencyKey,
    state: s.state,
    version: s.version,
    misfire_tolerance_ms: s.misfireToleranceMs,
    shard: s.shard,
    next_fire: next ? previewView(next) : null,
    generated_until: s.cursor.nominal,
    misfires_skipped: s.misfiresSkipped,
    // The dead-man's switch: late while a run missed sla_ms and no later one has succeeded.
    health: scheduleHealth(s, facts),
    last_success_at: iso(facts.lastSuccessAt),
    late_runs: facts.lateRuns,
    misfires: s.misfiresSkipped + facts.misfiredRuns,
    skips: facts.skippedRuns,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    paused_at: iso(s.pausedAt),
    deleted_at: iso(s.deletedAt),
  };
}
