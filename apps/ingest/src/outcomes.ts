import { jitterOffsetMs, previewFireTimes, type Job, type Schedule } from '@kairos/core';
import type { ScheduleRequestOutcomeRecord, ScheduleRequestRecord } from '@kairos/schemas';

/** What an applied request concerns, as the command left it (a trigger: the schedule and its run). */
export interface AppliedTo {
  readonly job: Job | null;
  readonly schedule: Schedule | null;
  readonly duplicate: boolean;
}

/**
 * The reply for an applied request: the job it concerns (its id, state, due time and version), or,
 * for a schedule command without a job, the schedule's state and version and its next fire time
 * as the due time (the time applied when it has none); `schedule_id` names the schedule.
 */
export function outcomeRecord(
  request: ScheduleRequestRecord,
  command: string,
  applied: AppliedTo,
  now: Date,
): ScheduleRequestOutcomeRecord {
  const { job, schedule, duplicate } = applied;
  const nextFireAt = schedule ? nextFire(schedule, now) : null;
  const subject = job
    ? { job_id: job.id, state: job.state, due_at: job.dueAt.getTime(), version: job.version }
    : schedule
      ? { job_id: '', state: schedule.state, due_at: nextFireAt ?? now.getTime(), version: schedule.version }
      : undefined;
  if (!subject) throw new Error(`request ${request.request_id} was applied to neither a job nor a schedule`);
  return {
    request_id: request.request_id,
    tenant: request.tenant,
    idempotency_key: request.idempotency_key,
    command,
    ...subject,
    duplicate,
    applied_at: now.getTime(),
    schedule_id: schedule?.id ?? null,
    next_fire_at: nextFireAt,
  };
}

/** When an active schedule fires next after `now` (its jitter included), as the API's next_fire shows it. */
function nextFire(s: Schedule, now: Date): number | null {
  if (s.state !== 'ACTIVE') return null;
  const [next] = previewFireTimes(s, now.getTime(), 1, jitterOffsetMs(s.tenantId, s.id, s.jitterMs));
  return next ? Date.parse(next.fireAt) : null;
}
