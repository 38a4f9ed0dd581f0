import { z } from 'zod';
import { fieldErrorsOf } from './zod-errors.js';
import type { Parsed } from './create-job.js';
import type { FieldError } from './errors.js';
import type { JobLimits } from './limits.js';

/** The wire shape of a reschedule request: a new due time, and optionally a new deadline. */
export const rescheduleShape = z
  .object({
    due_at: z.iso.datetime({ offset: true }).optional(),
    delay_ms: z.number().int().min(0).optional(),
    /** null clears the deadline; absent keeps the current one. */
    deadline_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .strict();

export type RescheduleRequest = z.input<typeof rescheduleShape>;

export interface Rescheduled {
  readonly dueAt: Date;
  readonly deadlineAt: Date | null;
}

/**
 * Validates a reschedule request for a job whose due time and deadline are `current`, at `now`,
 * into its new due time and deadline. Exactly one of due_at and delay_ms is required; the due
 * time obeys the same bounds as at creation; the resulting deadline (given, cleared, or kept)
 * must not be before the new due time. Every failing field is reported.
 */
export function parseReschedule(
  input: unknown,
  now: Date,
  limits: JobLimits,
  current: { dueAt: Date; deadlineAt: Date | null },
): Parsed<Rescheduled> {
  const shape = rescheduleShape.safeParse(input);
  if (!shape.success) {
    return { ok: false, errors: fieldErrorsOf(shape.error) };
  }
  const r = shape.data;
  const errors: FieldError[] = [];
  const at = (field: string, message: string) => errors.push({ field, message });

  let dueAt: Date | undefined;
  if (r.due_at !== undefined && r.delay_ms !== undefined) {
    at('due_at', 'give due_at or delay_ms, not both');
  } else if (r.due_at === undefined && r.delay_ms === undefined) {
    at('due_at', 'give the new due time as due_at or delay_ms');
  } else {
    const field = r.due_at !== undefined ? 'due_at' : 'delay_ms';
    dueAt = r.due_at !== undefined ? new Date(r.due_at) : new Date(now.getTime() + (r.delay_ms ?? 0));
    if (dueAt.getTime() < now.getTime() - limits.maxPastMs) {
      errors.push({
        field,
        message: `due time is more than ${limits.maxPastMs} ms in the past`,
        rule: 'DUE_TOO_FAR_IN_PAST',
      });
    }
    if (dueAt.getTime() > now.getTime() + limits.maxFutureMs) {
      at(field, `due time is more than ${limits.maxFutureMs} ms in the future`);
    }
  }

  const deadlineAt =
    r.deadline_at === undefined
      ? current.deadlineAt
      : r.deadline_at === null
        ? null
        : new Date(r.deadline_at);
  if (dueAt && deadlineAt && deadlineAt.getTime() < dueAt.getTime()) {
    at(
      'deadline_at',
      r.deadline_at === undefined
        ? `the current deadline ${deadlineAt.toISOString()} is before the new due time; ` +
            'give a new deadline_at, or null to clear it'
        : 'deadline_at is before the new due time; give a later deadline_at, or null to clear it',
    );
  }
  if (errors.length > 0 || !dueAt) return { ok: false, errors };
  return { ok: true, value: { dueAt, deadlineAt } };
}
