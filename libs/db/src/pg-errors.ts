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
 * Whether an error means PostgreSQL could not be reached or the connection was lost, rather than
 * "this statement is wrong": network errors, connection exceptions (SQLSTATE class 08),
 * insufficient resources (53), operator intervention such as a shutdown or a server still
 * starting (57P), and node-postgres's own messages for a lost or refused connection.
 */
export function isConnectionFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || /^(08|53|57P)/.test(e.code))) return true;
  return typeof e.message === 'string' && PG_CONNECTION_MESSAGES.test(e.message);
}
