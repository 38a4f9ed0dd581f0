import { ERROR_CODES, isKairosError } from './errors.js';

/**
 * What an error means to the code that caught it, whichever library threw it:
 * - `transient`: a dependency is down or dropped the connection; the request is fine, retry later;
 * - `serialization`: PostgreSQL aborted a transaction that lost a race (40001, 40P01); redo it now;
 * - `script`: a Redis script refused with its own code (STALE_EPOCH, REDIS_OOM…); the caller's
 *   policy decides;
 * - `invalid`: the input is wrong; retrying never helps;
 * - `other`: anything else (a bug, an unrecognised failure).
 */
export type ErrorClass = 'transient' | 'serialization' | 'script' | 'invalid' | 'other';

export interface ClassifiedError {
  readonly class: ErrorClass;
  /** What decided it: a KairosError code, a SQLSTATE, a script's reply code, a network code. */
  readonly code: string | undefined;
  /** Whether the same work can succeed if tried again (later, or at once for serialization). */
  readonly retriable: boolean;
}

/**
 * Reads the errors of one library (pg, ioredis, KafkaJS, the registry client) at its I/O
 * boundary; answers undefined for an error that is not that library's.
 */
export type ErrorRecogniser = (err: unknown) => ClassifiedError | undefined;

/** Script codes worth retrying; every other script refusal is final for the caller. */
const RETRIABLE_SCRIPT_CODES: ReadonlySet<string> = new Set(['REDIS_OOM']);

/** The policy: whether a class (and, for scripts, its code) is worth trying again. */
export function classified(cls: ErrorClass, code?: string): ClassifiedError {
  const retriable =
    cls === 'transient' ||
    cls === 'serialization' ||
    (cls === 'script' && code !== undefined && RETRIABLE_SCRIPT_CODES.has(code));
  return { class: cls, code, retriable };
}

/** Node's codes for a peer that cannot be reached or dropped the connection. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The network code of a Node system error (a socket that could not connect or broke), if any. */
function networkErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && NETWORK_CODES.has(code) ? code : undefined;
}

// Filled by the boundary libraries (libs/db, libs/redis, libs/kafka) when they are imported: an
// error of a library can only reach a caller that has loaded that library's boundary.
const recognisers: ErrorRecogniser[] = [];

/** Adds a library's recogniser (once; a second registration of the same function is ignored). */
export function registerErrorRecogniser(recogniser: ErrorRecogniser): void {
  if (!recognisers.includes(recogniser)) recognisers.push(recogniser);
}

/**
 * The one classification every app uses: KairosErrors by their code, library errors by that
 * library's recogniser, Node network errors as transient, anything else as `other`.
 */
export function classifyError(err: unknown): ClassifiedError {
  if (isKairosError(err))
    return { class: ERROR_CODES[err.code].class, code: err.code, retriable: err.retriable };
  for (const recognise of recognisers) {
    const c = recognise(err);
    if (c) return c;
  }
  // Whichever library's socket it was, an unreachable peer is a dependency down.
  const network = networkErrorCode(err);
  return network === undefined ? classified('other') : classified('transient', network);
}

/**
 * Whether an error means "try again" rather than "this is wrong": a dependency down (PostgreSQL,
 * Redis, Kafka, the registry), a lost serialization race, a retriable script refusal.
 */
export function isTransient(err: unknown): boolean {
  return classifyError(err).retriable;
}

export interface SerializationRetry {
  /** Tries in all, the first included. Default: 3. */
  readonly tries?: number;
  /** Called before each redo (logging). */
  readonly onRetry?: (err: unknown, tries: number) => void;
}

/**
 * Runs a transaction again when PostgreSQL aborted it for a lost race (serialization failure or
 * deadlock): the whole transaction, so the caller must have no effect outside it before commit.
 */
export async function retryOnSerialization<T>(
  fn: () => Promise<T>,
  options: SerializationRetry = {},
): Promise<T> {
  const tries = options.tries ?? 3;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries || classifyError(err).class !== 'serialization') throw err;
      options.onRetry?.(err, i);
    }
  }
}
