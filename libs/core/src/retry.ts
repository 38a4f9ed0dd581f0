/**
 * Retry decisions (pure). A handler's failure has a class; the class and the job's policy decide
 * whether the job runs again and after how long:
 *   transient  – retry with exponential backoff
 *   throttled  – retry no sooner than the Retry-After the handler reported (and the backoff)
 *   permanent  – never retry: straight to the dead-letter topic
 *   ambiguous  – the effect may have happened: retry, relying on the idempotency key
 */
export const FAILURE_CLASSES = ['transient', 'throttled', 'permanent', 'ambiguous'] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

/**
 * Not a handler's failure: the attempt never started, because its claim was refused by a Redis
 * that had lost what it knew of the attempt (GONE, see lease-claim.lua). The tracker checks it
 * against PostgreSQL: a job still live at that fence is dispatched again at once, keeping its
 * attempt number; any other job is left as it is. Reported by the worker SDK only.
 */
export const UNSTARTED = 'unstarted';

/** What a result may say its failure was: a handler's failure class, or UNSTARTED. */
export type ReportedFailure = FailureClass | typeof UNSTARTED;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Backoff base, ms. */
  readonly baseMs: number;
  /** Backoff ceiling, ms. */
  readonly capMs: number;
  /** Random jitter added on top, up to this many ms. */
  readonly jitterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  baseMs: 1000,
  capMs: 300_000,
  jitterMs: 1000,
};

/** The backoff part of a policy, stored with each job (its max attempts is a job field of its own). */
export type RetryBackoff = Omit<RetryPolicy, 'maxAttempts'>;

export const DEFAULT_RETRY_BACKOFF: RetryBackoff = {
  baseMs: DEFAULT_RETRY_POLICY.baseMs,
  capMs: DEFAULT_RETRY_POLICY.capMs,
  jitterMs: DEFAULT_RETRY_POLICY.jitterMs,
};

/** Longest base, cap or jitter a job may ask for: 24 h. */
export const MAX_RETRY_DELAY_MS = 24 * 3600_000;

export function isFailureClass(value: unknown): value is FailureClass {
  return typeof value === 'string' && (FAILURE_CLASSES as readonly string[]).includes(value);
}

export interface Failure {
  readonly class: FailureClass;
  /** For `throttled`: how long the dependency asked us to wait, ms. */
  readonly retryAfterMs?: number;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly reason: 'permanent' | 'exhausted' };

/** Validates a policy into its compiled form; a bad field is a RangeError naming it. */
export function compileRetryPolicy(p: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...p };
  for (const [k, v] of Object.entries(policy)) {
    if (!Number.isInteger(v) || v < 0)
      throw new RangeError(`retry policy ${k} must be a non-negative integer, got ${v}`);
  }
  if (policy.maxAttempts < 1) throw new RangeError('retry policy maxAttempts must be at least 1');
  if (policy.capMs < policy.baseMs) throw new RangeError('retry policy capMs must be at least baseMs');
  return policy;
}

/** min(cap, base · 2^(attempt−1) + random(0, jitter)) for the retry after `attempt` (1-based). */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number): number {
  const exp = policy.baseMs * 2 ** Math.max(0, attempt - 1);
  return Math.min(policy.capMs, exp + Math.floor(random() * (policy.jitterMs + 1)));
}

/**
 * Whether the job runs again after `attempt` (1-based) failed, and after how long (at most
 * MAX_RETRY_DELAY_MS beyond the backoff's cap). `random` returns a number in [0, 1) (injected so
 * tests are deterministic).
 */
export function decideRetry(
  policy: RetryPolicy,
  attempt: number,
  failure: Failure,
  random: () => number,
): RetryDecision {
  if (failure.class === 'permanent') return { retry: false, reason: 'permanent' };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: 'exhausted' };
  const backoff = backoffMs(policy, attempt, random);
  // A Retry-After beyond the longest delay a job may ask for is capped there, as the backoff is.
  const floor =
    failure.class === 'throttled' ? Math.min(MAX_RETRY_DELAY_MS, Math.max(0, failure.retryAfterMs ?? 0)) : 0;
  return { retry: true, delayMs: Math.max(backoff, floor) };
}
