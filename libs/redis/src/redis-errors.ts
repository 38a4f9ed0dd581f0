import { KairosError } from '@kairos/core';

/**
 * Redis answers a write refused at maxmemory (noeviction) with an error reply starting `OOM`: the
 * reply text is all the protocol gives, so it is read here, at the boundary, and turned into a
 * typed REDIS_OOM KairosError that callers test with isKairosError.
 */
export function isOomReply(err: unknown): boolean {
  // Anywhere in the text: a write refused inside a Lua script comes wrapped in the script's error.
  return err instanceof Error && /\bOOM\b/.test(err.message);
}

/** A refused-for-memory reply as REDIS_OOM (saying what was refused); anything else as is. */
export function typedOom(err: unknown, what: string): unknown {
  return isOomReply(err)
    ? new KairosError('REDIS_OOM', `Redis refused ${what}: out of memory`, { cause: err })
    : err;
}

/** Rethrows a refused-for-memory reply as REDIS_OOM (saying what was refused); anything else as is. */
export function rethrowOom(err: unknown, what: string): never {
  throw typedOom(err, what);
}
