import type { FieldError } from '@kairos/core';
import {
  REQUESTS_NAMESPACE,
  type CreateJobRecord,
  type RescheduleJobRecord,
  type ScheduleCommandName,
  type ScheduleRequestRecord,
} from '@kairos/schemas';

const MAX_REQUEST_ID_CHARS = 128;
/** As for the HTTP API's idempotency_key. */
const MAX_KEY_CHARS = 256;

/** A decoded request as the command handlers take it: the HTTP API's shapes, one code path. */
export type IngestCommand =
  | { readonly name: 'CreateJob'; readonly body: Record<string, unknown> }
  | { readonly name: 'CancelJob'; readonly jobId: string }
  | { readonly name: 'RescheduleJob'; readonly jobId: string; readonly body: Record<string, unknown> };

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
  const fields: FieldError[] = [];
  // The envelope is copied into answers and the request ledger: bounded like the HTTP API's keys.
  if (request.request_id.length < 1 || request.request_id.length > MAX_REQUEST_ID_CHARS) {
    fields.push({ field: 'request_id', message: `1 to ${MAX_REQUEST_ID_CHARS} characters` });
  }
  if (request.idempotency_key.length < 1 || request.idempotency_key.length > MAX_KEY_CHARS) {
    fields.push({ field: 'idempotency_key', message: `1 to ${MAX_KEY_CHARS} characters` });
  }
  const time = (field: string, ms: number | null): string | undefined => {
    if (ms === null) return undefined;
    const d = new Date(ms);
    if (Number.isNaN(d.getTime())) {
      fields.push({ field, message: `${ms} ms since the epoch is not a representable time` });
      return undefined;
    }
    return d.toISOString();
  };
  switch (name as ScheduleCommandName) {
    case 'CreateJob': {
      const c = branch as CreateJobRecord;
      let payload: unknown;
      try {
        payload = JSON.parse(c.payload) as unknown;
      } catch (err) {
        fields.push({ field: 'payload', message: `not JSON text: ${(err as Error).message}` });
      }
      const body: Record<string, unknown> = {
        tenant: request.tenant,
        type: c.type,
        resource_class: c.resource_class,
        payload,
        idempotency_key: request.idempotency_key,
      };
      const dueAt = time('due_at', c.due_at);
      if (dueAt !== undefined) body.due_at = dueAt;
      if (c.delay_ms !== null) body.delay_ms = c.delay_ms;
      const deadlineAt = time('deadline_at', c.deadline_at);
      if (deadlineAt !== undefined) body.deadline_at = deadlineAt;
      if (c.max_attempts !== null) body.max_attempts = c.max_attempts;
      if (c.retry !== null) body.retry = withoutNulls({ ...c.retry });
      return fields.length > 0
        ? { ok: false, name, fields }
        : { ok: true, command: { name: 'CreateJob', body } };
    }
    case 'CancelJob': {
      const c = branch as { job_id: string };
      return fields.length > 0
        ? { ok: false, name, fields }
        : { ok: true, command: { name: 'CancelJob', jobId: c.job_id } };
    }
    case 'RescheduleJob': {
      const c = branch as RescheduleJobRecord;
      const body: Record<string, unknown> = {};
      const dueAt = time('due_at', c.due_at);
      if (dueAt !== undefined) body.due_at = dueAt;
      if (c.delay_ms !== null) body.delay_ms = c.delay_ms;
      const deadlineAt = time('deadline_at', c.deadline_at);
      if (c.clear_deadline && c.deadline_at !== null) {
        fields.push({ field: 'deadline_at', message: 'give deadline_at or clear_deadline, not both' });
      } else if (c.clear_deadline) {
        body.deadline_at = null;
      } else if (deadlineAt !== undefined) {
        body.deadline_at = deadlineAt;
      }
      return fields.length > 0
        ? { ok: false, name, fields }
        : { ok: true, command: { name: 'RescheduleJob', jobId: c.job_id, body } };
    }
    default:
      // A command added to the union after this build (the resolver would normally refuse it).
      return { ok: false, name, fields: [{ field: 'command', message: `unsupported command ${name}` }] };
  }
}

function withoutNulls(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
}
