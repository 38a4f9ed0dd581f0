import { z } from 'zod';
import type { FieldError, FieldRule } from './errors.js';
import type { JobSpec } from './job.js';
import type { JobLimits } from './limits.js';
import { storableJson, storableText } from './storable.js';
import { fieldErrorsOf, joinPath } from './zod-errors.js';
import { DEFAULT_RETRY_BACKOFF, MAX_RETRY_DELAY_MS } from './retry.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** The wire shape of a create-job request (HTTP and schedule-requests); also its OpenAPI schema. */
export const createJobShape = z
  .object({
    tenant: z.string().min(1).max(64).regex(NAME, 'letters, digits and . _ : - only'),
    type: z.string().min(1).max(128).regex(NAME, 'letters, digits and . _ : - only'),
    resource_class: z.string().min(1).max(32),
    payload: z.unknown().optional().superRefine(storableJson),
    due_at: z.iso.datetime({ offset: true }).optional(),
    delay_ms: z.number().int().min(0).optional(),
    deadline_at: z.iso.datetime({ offset: true }).optional(),
    idempotency_key: z.string().min(1).max(256).superRefine(storableText).optional(),
    max_attempts: z.number().int().min(1).optional(),
    retry: z
      .object({
        base_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
        cap_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
        jitter_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type CreateJobRequest = z.input<typeof createJobShape>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/**
 * Validates one create-job request against the limits, at `now`, into a JobSpec. Every failing
 * field is reported (with `pathPrefix`, e.g. `jobs.3`), and nothing is created on any failure.
 */
export function parseCreateJob(
  input: unknown,
  now: Date,
  limits: JobLimits,
  pathPrefix = '',
): Parsed<JobSpec> {
  const shape = createJobShape.safeParse(input);
  if (!shape.success) {
    return { ok: false, errors: fieldErrorsOf(shape.error, pathPrefix) };
  }
  const r = shape.data;
  const errors: FieldError[] = [];
  const at = (field: string, message: string, rule?: FieldRule) =>
    errors.push({ field: joinPath(pathPrefix, [field]), message, ...(rule ? { rule } : {}) });

  if (!limits.resourceClasses.includes(r.resource_class)) {
    at(
      'resource_class',
      `unknown resource class "${r.resource_class}"; one of ${limits.resourceClasses.join(', ')}`,
    );
  }
  if (r.due_at !== undefined && r.delay_ms !== undefined) at('due_at', 'give due_at or delay_ms, not both');
  const dueAt = r.due_at !== undefined ? new Date(r.due_at) : new Date(now.getTime() + (r.delay_ms ?? 0));
  if (dueAt.getTime() < now.getTime() - limits.maxPastMs) {
    at(
      r.due_at !== undefined ? 'due_at' : 'delay_ms',
      `due time is more than ${limits.maxPastMs} ms in the past`,
      'DUE_TOO_FAR_IN_PAST',
    );
  }
  if (dueAt.getTime() > now.getTime() + limits.maxFutureMs) {
    at(
      r.due_at !== undefined ? 'due_at' : 'delay_ms',
      `due time is more than ${limits.maxFutureMs} ms in the future`,
    );
  }
  const deadlineAt = r.deadline_at !== undefined ? new Date(r.deadline_at) : null;
  if (deadlineAt && deadlineAt.getTime() < dueAt.getTime())
    at('deadline_at', 'deadline_at is before the due time');
  const maxAttempts = r.max_attempts ?? limits.defaultMaxAttempts;
  if (maxAttempts > limits.maxAttemptsCeiling) at('max_attempts', `at most ${limits.maxAttemptsCeiling}`);
  // A field left out takes its default, kept consistent with the fields given: the default cap
  // never falls below a larger base, nor the default base above a smaller cap.
  const given = r.retry ?? {};
  const baseMs = given.base_ms ?? Math.min(DEFAULT_RETRY_BACKOFF.baseMs, given.cap_ms ?? Infinity);
  const capMs = given.cap_ms ?? Math.max(DEFAULT_RETRY_BACKOFF.capMs, baseMs);
  const jitterMs = given.jitter_ms ?? DEFAULT_RETRY_BACKOFF.jitterMs;
  if (capMs < baseMs) at('retry.cap_ms', `cap_ms (${capMs}) must be at least base_ms (${baseMs})`);
  const payload = JSON.stringify(r.payload ?? {});
  const payloadBytes = new TextEncoder().encode(payload).length;
  if (payloadBytes > limits.maxPayloadBytes) {
    at(
      'payload',
      `payload is ${payloadBytes} bytes as JSON; the limit is ${limits.maxPayloadBytes}`,
      'PAYLOAD_TOO_LARGE',
    );
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      tenantId: r.tenant,
      type: r.type,
      resourceClass: r.resource_class,
      payload,
      dueAt,
      deadlineAt,
      idempotencyKey: r.idempotency_key ?? null,
      maxAttempts,
      retry: { baseMs, capMs, jitterMs },
    },
  };
}
