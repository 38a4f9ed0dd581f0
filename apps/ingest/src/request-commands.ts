import type { FieldError } from '@kairos/core';
import {
  REQUESTS_NAMESPACE,
  type CreateJobRecord,
  type RescheduleJobRecord,
  type ScheduleRequestRecord,
} from '@kairos/schemas';
import { FieldReader, setPresent, withoutNulls } from './request-fields.js';
import {
  isScheduleCommand,
  mapScheduleCommand,
  type ScheduleIngestCommand,
} from './schedule-request-commands.js';

const MAX_REQUEST_ID_CHARS = 128;
/** As for the HTTP API's idempotency_key. */
const MAX_KEY_CHARS = 256;

/** A decoded request as the command handlers take it: the HTTP API's shapes, one code path. */
export type IngestCommand =
  | { readonly name: 'CreateJob'; readonly body: Record<string, unknown> }
  | { readonly name: 'CancelJob'; readonly jobId: string }
  | { readonly name: 'RescheduleJob'; readonly jobId: string; readonly body: Record<string, unknown> }
  | ScheduleIngestCommand;

export type Mapped =
  | { readonly ok: true; readonly command: IngestCommand }
  | { readonly ok: false; readonly name: string; readonly fields: FieldError[] };

/** The short name of a request's command (`CreateJob`…), whatever its union branch. */
export function commandName(request: ScheduleRequestRecord): string {
  const branch = Object.keys(request.command)[0] ?? '';
  return branch.startsWith(`${REQUESTS_NAMESPACE}.`) ? branch.slice(REQUESTS_NAMESPACE.length + 1) : branch;
}

/**
 * Maps a decoded request onto the HTTP API's request body for its command, so validation is the
 * command handlers' own. Only what Avro cannot carry as the API does is checked here: the payload
 * must be JSON text, and timestamps must be representable times.
 */
export function mapRequest(request: ScheduleRequestRecord): Mapped {
  const name = commandName(request);
  const branch = (request.command as Record<string, unknown>)[`${REQUESTS_NAMESPACE}.${name}`];
  const f = new FieldReader();
  // The envelope is copied into answers and the request ledger: bounded like the HTTP API's keys.
  if (request.request_id.length < 1 || request.request_id.length > MAX_REQUEST_ID_CHARS) {
    f.errors.push({ field: 'request_id', message: `1 to ${MAX_REQUEST_ID_CHARS} characters` });
  }
  if (request.idempotency_key.length < 1 || request.idempotency_key.length > MAX_KEY_CHARS) {
    f.errors.push({ field: 'idempotency_key', message: `1 to ${MAX_KEY_CHARS} characters` });
  }
  const command = isScheduleCommand(name)
    ? mapScheduleCommand(name, branch, request, f)
    : mapJobCommand(name, branch, request, f);
  if (command === undefined) {
    // A command added to the union after this build (the resolver would normally refuse it).
    return { ok: false, name, fields: [{ field: 'command', message: `unsupported command ${name}` }] };
  }
  return f.errors.length > 0 ? { ok: false, name, fields: f.errors } : { ok: true, command };
}

function mapJobCommand(
  name: string,
  branch: unknown,
  request: ScheduleRequestRecord,
  f: FieldReader,
): IngestCommand | undefined {
  switch (name) {
    case 'CreateJob': {
      const c = branch as CreateJobRecord;
      const body: Record<string, unknown> = {
        tenant: request.tenant,
        type: c.type,
        resource_class: c.resource_class,
        payload: f.json('payload', c.payload),
        idempotency_key: request.idempotency_key,
      };
      setPresent(body, 'due_at', f.time('due_at', c.due_at));
      setPresent(body, 'delay_ms', c.delay_ms);
      setPresent(body, 'deadline_at', f.time('deadline_at', c.deadline_at));
      setPresent(body, 'max_attempts', c.max_attempts);
      if (c.retry !== null) body.retry = withoutNulls(c.retry);
      return { name: 'CreateJob', body };
    }
    case 'CancelJob':
      return { name: 'CancelJob', jobId: (branch as { job_id: string }).job_id };
    case 'RescheduleJob': {
      const c = branch as RescheduleJobRecord;
      const body: Record<string, unknown> = {};
      setPresent(body, 'due_at', f.time('due_at', c.due_at));
      setPresent(body, 'delay_ms', c.delay_ms);
      const deadlineAt = f.time('deadline_at', c.deadline_at);
      if (c.clear_deadline && c.deadline_at !== null) {
        f.errors.push({ field: 'deadline_at', message: 'give deadline_at or clear_deadline, not both' });
      } else if (c.clear_deadline) {
        body.deadline_at = null;
      } else {
        setPresent(body, 'deadline_at', deadlineAt);
      }
      return { name: 'RescheduleJob', jobId: c.job_id, body };
    }
    default:
      return undefined;
  }
}
