import { classified, KairosError, type ClassifiedError } from '@kairos/core';

/** A Redis error code: the reply's first word by the protocol's convention (ERR, OOM, STALE_EPOCH…). */
const CODE = /^[A-Z][A-Z0-9_]*$/;

/**
 * The code of a Redis error reply, or undefined for anything that is not one. Our Lua scripts
 * answer `redis.error_reply('<CODE> …')`; a bare `error_reply('<CODE>')` reaches the client as
 * `ERR <CODE>` (Redis adds its generic code), and a failed call inside a script on Redis 6 comes
 * wrapped as `ERR Error running script …: -<CODE> …`: both give the code inside.
 */
export function redisReplyCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return undefined;
  const [first, second] = err.message.split(' ', 2);
  if (first !== 'ERR') return first !== undefined && CODE.test(first) ? first : undefined;
  if (second !== undefined && CODE.test(second)) return second;
  return /: -([A-Z][A-Z0-9_]*) /.exec(err.message)?.[1] ?? 'ERR';
}

/** The codes our Lua scripts (scripts/*.lua) refuse with. */
const SCRIPT_CODES: ReadonlySet<string> = new Set(['STALE_EPOCH', 'BAD_RATE_LIMIT']);

/**
 * Replies of a server that is starting, busy or failing over, or of a Redis Cluster moving a slot:
 * the same call succeeds later. ioredis follows MOVED and ASK itself, except for a pipelined
 * command whose batch was answered from several places (its auto-pipelining batches per node, and
 * a slot that just moved leaves part of a batch redirected): those reach the caller, and its retry
 * goes to the slot's new node.
 */
const TRANSIENT_REPLY_CODES: ReadonlySet<string> = new Set([
  'LOADING',
  'BUSY',
  'TRYAGAIN',
  'CLUSTERDOWN',
  'MASTERDOWN',
  'MOVED',
  'ASK',
]);

/**
 * ioredis's errors as the shared classification sees them (registered with classifyError by this
 * package's entry point): a script's own code is a `script` error with that code (a write refused
 * at maxmemory as REDIS_OOM), any other reply (WRONGTYPE, ERR…) is `other`, a server not ready is `transient`, and so is a client that gave up
 * on an unreachable server (its own error and message). Network errors are classified in core.
 */
export function recogniseRedisError(err: unknown): ClassifiedError | undefined {
  const code = redisReplyCode(err);
  if (code === 'OOM') return classified('script', 'REDIS_OOM');
  if (code !== undefined && TRANSIENT_REPLY_CODES.has(code)) return classified('transient', code);
  if (code !== undefined) return classified(SCRIPT_CODES.has(code) ? 'script' : 'other', code);
  if (!(err instanceof Error)) return undefined;
  if (err.name === 'MaxRetriesPerRequestError' || err.message === 'Connection is closed.')
    return classified('transient', err.name);
  // A cluster client that gave up following a slot being moved (TRYAGAIN while keys migrate).
  if (err.message.startsWith('Too many Cluster redirections'))
    return classified('transient', 'CLUSTER_REDIRECTIONS');
  return undefined;
}

/**
 * A refused-for-memory reply as a typed REDIS_OOM KairosError (saying what was refused), so
 * callers test it with isKairosError; anything else as is.
 */
export function typedOom(err: unknown, what: string): unknown {
  return redisReplyCode(err) === 'OOM'
    ? new KairosError('REDIS_OOM', `Redis refused ${what}: out of memory`, { cause: err })
    : err;
}

/** A script's STALE_EPOCH refusal as a typed KairosError; anything else as is. */
export function typedStaleEpoch(err: unknown, partition: number, epoch: number): unknown {
  return redisReplyCode(err) === 'STALE_EPOCH'
    ? new KairosError('STALE_EPOCH', `epoch ${epoch} no longer owns partition ${partition}`, { cause: err })
    : err;
}
