import type { WorkerLogger } from './options.js';

type Level = 'info' | 'warn' | 'error';

/**
 * The logger of one attempt: every line carries `bindings` (jobId, fence, traceparent). Made on
 * its first line (most attempts log none), as the host logger's child when it has `child` (pino),
 * else by merging the bindings into each line.
 */
export function jobLogger(base: WorkerLogger, bindings: Readonly<Record<string, unknown>>): WorkerLogger {
  let made: WorkerLogger | undefined;
  const get = (): WorkerLogger => (made ??= base.child ? base.child(bindings) : merging(base, bindings));
  const at = (level: Level) => (obj: object, msg?: string) => get()[level](obj, msg);
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

function merging(base: WorkerLogger, bindings: Readonly<Record<string, unknown>>): WorkerLogger {
  const at = (level: Level) => (obj: object, msg?: string) => base[level]({ ...bindings, ...obj }, msg);
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
