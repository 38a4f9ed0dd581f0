import type { ScheduleChange } from '@kairos/commands';
import type {
  ResumeScheduleRecord,
  RecurringScheduleCommandName,
  ScheduleIdRecord,
  ScheduleRequestRecord,
  ScheduleRulesRecord,
  UpdateScheduleRecord,
} from '@kairos/schemas';
import { setPresent, withoutNulls, type FieldReader } from './request-fields.js';

/** A schedule command as ScheduleCommands takes it: a create's body, or a change of a schedule. */
export type ScheduleIngestCommand =
  | { readonly name: 'CreateSchedule'; readonly body: Record<string, unknown> }
  | {
      readonly name: Exclude<RecurringScheduleCommandName, 'CreateSchedule'>;
      readonly change: ScheduleChange;
    };

const SCHEDULE_COMMANDS: readonly string[] = [
  'CreateSchedule',
  'UpdateSchedule',
  'PauseSchedule',
  'ResumeSchedule',
  'DeleteSchedule',
  'TriggerSchedule',
] satisfies readonly RecurringScheduleCommandName[];

/** Whether a command is one of the schedule commands (ScheduleCommands applies it). */
export function isScheduleCommand(name: string): name is RecurringScheduleCommandName {
  return SCHEDULE_COMMANDS.includes(name);
}

/**
 * Maps a schedule command onto what ScheduleCommands takes from the HTTP API: a create's body (the
 * request's tenant and idempotency key in it, as in POST /v1/schedules), or the change of an
 * existing schedule (PUT, pause, resume, delete, trigger). A null field is an absent one: the
 * handlers' defaults apply.
 */
export function mapScheduleCommand(
  name: RecurringScheduleCommandName,
  branch: unknown,
  request: ScheduleRequestRecord,
  f: FieldReader,
): ScheduleIngestCommand {
  const id = (branch as ScheduleIdRecord).schedule_id;
  switch (name) {
    case 'CreateSchedule': {
      const body = rulesBody(request.tenant, branch as ScheduleRulesRecord, f);
      return { name, body: { ...body, idempotency_key: request.idempotency_key } };
    }
    case 'UpdateSchedule': {
      const c = branch as UpdateScheduleRecord;
      const body = rulesBody(request.tenant, c, f);
      const change = { kind: 'update', id, body, expectedVersion: c.expected_version ?? undefined } as const;
      return { name, change };
    }
    case 'ResumeSchedule':
      return {
        name,
        change: { kind: 'resume', id, body: { catch_up: (branch as ResumeScheduleRecord).catch_up } },
      };
    case 'PauseSchedule':
      return { name, change: { kind: 'pause', id } };
    case 'DeleteSchedule':
      return { name, change: { kind: 'delete', id } };
    case 'TriggerSchedule':
      return { name, change: { kind: 'trigger', id } };
  }
}

/** A schedule's rules as the body of POST /v1/schedules (PUT /v1/schedules/{id}). */
function rulesBody(tenant: string, r: ScheduleRulesRecord, f: FieldReader): Record<string, unknown> {
  const job: Record<string, unknown> = {
    type: r.job.type,
    resource_class: r.job.resource_class,
    payload: f.json('job.payload', r.job.payload),
  };
  setPresent(job, 'max_attempts', r.job.max_attempts);
  if (r.job.retry !== null) job.retry = withoutNulls(r.job.retry);
  setPresent(job, 'deadline_ms', r.job.deadline_ms);
  const body: Record<string, unknown> = { tenant, cron: r.cron, time_zone: r.time_zone };
  setPresent(body, 'start_at', f.time('start_at', r.start_at));
  setPresent(body, 'end_at', f.time('end_at', r.end_at));
  body.job = job;
  if (r.dst !== null) body.dst = withoutNulls(r.dst);
  if (r.misfire !== null) body.misfire = withoutNulls(r.misfire);
  setPresent(body, 'overlap', r.overlap);
  setPresent(body, 'jitter_ms', r.jitter_ms);
  setPresent(body, 'sla_ms', r.sla_ms);
  return body;
}
