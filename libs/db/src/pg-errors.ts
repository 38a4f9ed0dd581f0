import { classified, type ClassifiedError } from '@kairos/core';

/**
 * node-postgres reports a lost or refused connection partly without a code; these messages are
 * its own (pg and pg-pool), so matching them is the only way to recognise the outage.
 */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|Client was closed/i;

/** Transactions PostgreSQL aborted for losing a race: redone as a whole, they can succeed. */
const SERIALIZATION_SQLSTATES: ReadonlySet<string> = new Set(['40001', '40P01']);

/**
 * Errors that say the values sent are wrong, whenever they are sent: data exceptions (class 22:
 * an invalid timestamp, a number out of range, a NUL in text) and the not-null, foreign-key and
 * check violations. Unique violations (23505) are left out: two writers racing for one key raise
 * them, and the loser's retry can succeed.
 */
const DATA_FAULT_SQLSTATE = /^(22|23502|23503|23514)/;

/**
 * PostgreSQL's errors as the shared classification sees them (registered with classifyError by
 * this package's entry point): connection exceptions (SQLSTATE class 08), insufficient resources
 * (53) and operator intervention such as a shutdown or a server still starting (57P) are a
 * dependency down, as are node-postgres's own messages for a lost or refused connection;
 * serialization failures and deadlocks are a lost race; data faults (above) are invalid input.
 * Network errors are classified in core.
 */
export function recognisePgError(err: unknown): ClassifiedError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string') {
    if (SERIALIZATION_SQLSTATES.has(e.code)) return classified('serialization', e.code);
    if (/^(08|53|57P)/.test(e.code)) return classified('transient', e.code);
    if (DATA_FAULT_SQLSTATE.test(e.code)) return classified('invalid', e.code);
  }
  if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.test(e.message)) return classified('transient');
  return undefined;
}
