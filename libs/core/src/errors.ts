/**
 * One error base class with a closed set of codes and a `retriable` flag. Callers branch on
 * `isKairosError(err, code)`, never on message text.
 */
export const ERROR_CODES = {
  VALIDATION: { retriable: false, status: 400, class: 'invalid' },
  NOT_FOUND: { retriable: false, status: 404, class: 'invalid' },
  CONFLICT: { retriable: false, status: 409, class: 'invalid' },
  PAYLOAD_TOO_LARGE: { retriable: false, status: 413, class: 'invalid' },
  // No API key, or one that is unknown, revoked or expired (which of them is not said).
  UNAUTHENTICATED: { retriable: false, status: 401, class: 'invalid' },
  // A valid key without the scope, or acting for another tenant than its own.
  FORBIDDEN: { retriable: false, status: 403, class: 'invalid' },
  // The key's request rate is used up; the answer says when to retry.
  RATE_LIMITED: { retriable: true, status: 429, class: 'invalid' },
  UNSUPPORTED_MEDIA_TYPE: { retriable: false, status: 415, class: 'invalid' },
  // A Redis script's own refusal (or the same epoch check in PostgreSQL-only mode).
  STALE_EPOCH: { retriable: false, status: 409, class: 'script' },
  UNDECODABLE: { retriable: false, status: 400, class: 'invalid' },
  DEPENDENCY_UNAVAILABLE: { retriable: true, status: 503, class: 'transient' },
  // Redis refused a write at maxmemory (noeviction): the delay tier falls back to PostgreSQL.
  REDIS_OOM: { retriable: true, status: 503, class: 'script' },
  CONFIG: { retriable: false, status: 500, class: 'other' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Policy rules whose violation an ingress reports with its own reason (the Kafka ingress's
 * rejection reasons); any other field error is plain invalid input.
 */
export type FieldRule = 'DUE_TOO_FAR_IN_PAST' | 'PAYLOAD_TOO_LARGE';

export interface FieldError {
  /** Dotted path of the failing field in the request, e.g. `jobs.3.due_at`. */
  readonly field: string;
  readonly message: string;
  /** Set when the field broke one of the policy rules above. */
  readonly rule?: FieldRule;
}

export class KairosError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly fields: readonly FieldError[];

  constructor(
    code: ErrorCode,
    message: string,
    options: { fields?: readonly FieldError[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KairosError';
    this.code = code;
    this.retriable = ERROR_CODES[code].retriable;
    this.fields = options.fields ?? [];
  }
}

export function isKairosError(err: unknown, code?: ErrorCode): err is KairosError {
  return err instanceof KairosError && (code === undefined || err.code === code);
}
