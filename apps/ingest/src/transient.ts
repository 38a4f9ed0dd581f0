import { isKairosError } from '@kairos/core';

const NETWORK_CODES = new Set([
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

/**
 * node-postgres reports a lost or refused connection partly without a code; these messages are
 * its own (pg and pg-pool), so matching them is the only way to recognise the outage.
 */
const PG_CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection error and is not queryable|Client was closed/i;

/**
 * Whether an error means "a dependency is down, try again" rather than "this request is wrong":
 * retriable KairosErrors (DEPENDENCY_UNAVAILABLE), network errors, PostgreSQL connection
 * exceptions (SQLSTATE class 08), insufficient resources (53), operator intervention such as a
 * shutdown or a server still starting (57P), and serialization failures or deadlocks.
 */
export function isTransient(err: unknown): boolean {
  if (isKairosError(err)) return err.retriable;
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; retriable?: unknown; name?: unknown };
  if (typeof e.code === 'string') {
    if (NETWORK_CODES.has(e.code) || /^(08|53|57P)/.test(e.code)) return true;
    if (e.code === '40001' || e.code === '40P01') return true;
  }
  if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.test(e.message)) return true;
  // KafkaJS marks what it considers worth retrying.
  return typeof e.name === 'string' && e.name.startsWith('KafkaJS') && e.retriable === true;
}
