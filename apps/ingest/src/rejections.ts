import { isKairosError, type FieldError } from '@kairos/core';
import { sourceFields, withSizeNote, type RecordSource } from '@kairos/kafka';
import type { RejectionReason, ScheduleRequestRecord, ScheduleRequestRejectionRecord } from '@kairos/schemas';

/** Why a request is not applied, as its rejection event says it. */
export interface Rejection {
  readonly reason: RejectionReason;
  readonly message: string;
  readonly fields: readonly FieldError[];
}

/**
 * The reason for invalid fields: a policy rule's own reason when every failing field broke that
 * same rule (a due time too far in the past, a payload too large), INVALID_FIELD otherwise.
 */
export function fieldsRejection(fields: readonly FieldError[], message?: string): Rejection {
  const rules = new Set(fields.map((f) => f.rule));
  const [rule] = rules;
  const reason: RejectionReason = rules.size === 1 && rule !== undefined ? rule : 'INVALID_FIELD';
  return {
    reason,
    message: message ?? fields.map((f) => `${f.field}: ${f.message}`).join('; '),
    fields: fields.map(({ field, message: m }) => ({ field, message: m })),
  };
}

/**
 * The rejection for a command handler's error, or undefined when the error says nothing about
 * the request (a dependency is down, or a bug): those are never rejections. `subject` is what the
 * command names: a job (JOB_… reasons, `job_id`) or a schedule (SCHEDULE_… reasons, `schedule_id`).
 */
export function commandRejection(err: unknown, subject: 'job' | 'schedule' = 'job'): Rejection | undefined {
  if (!isKairosError(err) || err.retriable) return undefined;
  const job = subject === 'job';
  switch (err.code) {
    case 'VALIDATION':
      // The id a command names is `id` in the HTTP path, `job_id` or `schedule_id` in the request.
      return fieldsRejection(
        err.fields.map((f) => (f.field === 'id' ? { ...f, field: `${subject}_id` } : f)),
        err.message,
      );
    case 'PAYLOAD_TOO_LARGE':
      return { reason: 'PAYLOAD_TOO_LARGE', message: err.message, fields: err.fields };
    case 'NOT_FOUND':
      return { reason: job ? 'JOB_NOT_FOUND' : 'SCHEDULE_NOT_FOUND', message: err.message, fields: [] };
    case 'CONFLICT':
      return {
        reason: job ? 'JOB_STATE_CONFLICT' : 'SCHEDULE_STATE_CONFLICT',
        message: err.message,
        fields: [],
      };
    case 'UNDECODABLE':
      return { reason: 'UNDECODABLE', message: err.message, fields: [] };
    default:
      return undefined;
  }
}

/** Where a rejected request was read from. */
export type Source = RecordSource;

/**
 * Original values above this are left out of rejections (the message says so): with its own
 * fields a rejection must stay under the topic's message size limit (1 MiB by default), or it
 * could never be published and its partition would stall.
 */
export const MAX_ORIGINAL_VALUE_BYTES = 512 * 1024;

/** Strings copied from a request into its rejection are cut to this (a tenant may be anything). */
const MAX_COPIED_CHARS = 256;
const MAX_MESSAGE_CHARS = 4096;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The event for a rejected request: its reason, and the request as it arrived. */
export function rejectionRecord(
  source: Source,
  rejection: Rejection,
  decoded: { readonly request: ScheduleRequestRecord; readonly command: string } | undefined,
  schemaId: number | null,
  now: Date,
): ScheduleRequestRejectionRecord {
  const { topic, partition, message } = source;
  const text = withSizeNote(rejection.message, source, MAX_ORIGINAL_VALUE_BYTES);
  const copied = (s: string | undefined) => (s === undefined ? null : clip(s, MAX_COPIED_CHARS));
  return {
    rejection_id: `${topic}/${partition}/${message.offset}`,
    reason: rejection.reason,
    message: clip(text, MAX_MESSAGE_CHARS),
    fields: rejection.fields.map(({ field, message: m }) => ({
      field: clip(field, MAX_COPIED_CHARS),
      message: clip(m, MAX_MESSAGE_CHARS),
    })),
    request_id: copied(decoded?.request.request_id),
    tenant: copied(decoded?.request.tenant),
    command: copied(decoded?.command),
    schema_id: schemaId,
    ...sourceFields(source, MAX_ORIGINAL_VALUE_BYTES),
    rejected_at: now.getTime(),
  };
}
