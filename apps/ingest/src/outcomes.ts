import type { Job } from '@kairos/core';
import type { ScheduleRequestOutcomeRecord, ScheduleRequestRecord } from '@kairos/schemas';

/** The reply for an applied request: the job it concerns, as the command left it. */
export function outcomeRecord(
  request: ScheduleRequestRecord,
  command: string,
  job: Job,
  duplicate: boolean,
  now: Date,
): ScheduleRequestOutcomeRecord {
  return {
    request_id: request.request_id,
    tenant: request.tenant,
    idempotency_key: request.idempotency_key,
    command,
    job_id: job.id,
    state: job.state,
    duplicate,
    due_at: job.dueAt.getTime(),
    version: job.version,
    applied_at: now.getTime(),
  };
}
