import { isFailureClass, MAX_RETRY_DELAY_MS, type FailureClass } from '@kairos/core';
import type { TaskErrorRecord } from '@kairos/schemas';

export type { FailureClass } from '@kairos/core';

/** Longest error message carried in a result (and so in a dead letter's history), in characters. */
export const MAX_ERROR_MESSAGE_CHARS = 4096;

/**
 * Base of the errors a handler throws to say how its attempt failed; the class decides whether
 * and when the job runs again (the job's retry policy supplies the backoff and max attempts):
 *
 * - `transient`: retry with backoff (a timeout, a 503, a lost connection before the call);
 * - `throttled`: retry no sooner than `retryAfterMs` (and the backoff), see ThrottledError;
 * - `permanent`: never retry, the job goes straight to the dead-letter topic (bad input, 4xx);
 * - `ambiguous`: the effect may have happened; retry, relying on `ctx.idempotencyKey`.
 *
 * Any other thrown value is ambiguous.
 */
export class KairosTaskError extends Error {
  readonly failureClass: FailureClass;

  constructor(failureClass: FailureClass, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (!isFailureClass(failureClass))
      throw new RangeError(`unknown failure class "${String(failureClass)}"`);
    this.name = 'KairosTaskError';
    this.failureClass = failureClass;
  }
}

/** The attempt failed in a way worth retrying after a backoff. */
export class TransientError extends KairosTaskError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('transient', message, options);
    this.name = 'TransientError';
  }
}

/**
 * A dependency refused for now and said when to come back (HTTP 429/503 with Retry-After): the
 * job is retried no sooner than `retryAfterMs` from the failure, nor sooner than its backoff.
 * `parseRetryAfter` reads the header.
 */
export class ThrottledError extends KairosTaskError {
  readonly retryAfterMs: number;

  constructor(message: string, options: { retryAfterMs: number; cause?: unknown }) {
    super('throttled', message, options);
    const { retryAfterMs } = options;
    if (!Number.isFinite(retryAfterMs) || retryAfterMs < 0 || retryAfterMs > MAX_RETRY_DELAY_MS) {
      throw new RangeError(
        `retryAfterMs must be a number of milliseconds from 0 to ${MAX_RETRY_DELAY_MS} (24 h), got ${retryAfterMs}`,
      );
    }
    this.name = 'ThrottledError';
    this.retryAfterMs = Math.ceil(retryAfterMs);
  }
}

/** The attempt can never succeed (invalid payload, a 4xx, a missing handler): no retry, dead-lettered at once. */
export class PermanentError extends KairosTaskError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('permanent', message, options);
    this.name = 'PermanentError';
  }
}

/**
 * An HTTP Retry-After value (delay seconds, or an HTTP date) as milliseconds from `nowMs`, at most
 * 24 h (MAX_RETRY_DELAY_MS: what ThrottledError accepts, whatever a dependency asks for);
 * undefined when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(MAX_RETRY_DELAY_MS, Number(v) * 1000);
  // An HTTP date names its day and month; bare numbers like "-5" are not dates.
  if (!/[A-Za-z]{3}/.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.min(MAX_RETRY_DELAY_MS, Math.max(0, at - nowMs));
}

/**
 * How a thrown value is reported in the attempt's result. A KairosTaskError (or any error with
 * a valid `failureClass`, e.g. from another copy of this SDK) keeps its class; anything else is
 * `ambiguous`: the handler may have had its effect before it threw.
 */
export function describeFailure(err: unknown): TaskErrorRecord {
  const failureClass = failureClassOf(err);
  const retryAfter = failureClass === 'throttled' ? (err as { retryAfterMs?: unknown }).retryAfterMs : null;
  return {
    error_class: err instanceof Error ? err.name : 'Error',
    message: truncate(err instanceof Error ? err.message : String(err)),
    failure_class: failureClass,
    retry_after_ms:
      typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter >= 0
        ? Math.ceil(retryAfter)
        : null,
  };
}

function failureClassOf(err: unknown): FailureClass {
  if (err instanceof KairosTaskError) return err.failureClass;
  const declared =
    typeof err === 'object' && err !== null ? (err as { failureClass?: unknown }).failureClass : undefined;
  return isFailureClass(declared) ? declared : 'ambiguous';
}

function truncate(message: string): string {
  return message.length <= MAX_ERROR_MESSAGE_CHARS
    ? message
    : `${message.slice(0, MAX_ERROR_MESSAGE_CHARS - 1)}…`;
}
