import { isKairosError } from '@kairos/core';
import { isConnectionFailure } from '@kairos/db';

/**
 * Whether an error means "a dependency is down, try again" rather than "this request is wrong":
 * retriable KairosErrors (DEPENDENCY_UNAVAILABLE), a PostgreSQL connection refused or lost
 * (network errors, SQLSTATE classes 08, 53 and 57P: see isConnectionFailure), serialization
 * failures or deadlocks, and what KafkaJS marks retriable.
 */
export function isTransient(err: unknown): boolean {
  if (isKairosError(err)) return err.retriable;
  if (typeof err !== 'object' || err === null) return false;
  if (isConnectionFailure(err)) return true;
  const e = err as { code?: unknown; retriable?: unknown; name?: unknown };
  if (e.code === '40001' || e.code === '40P01') return true;
  // KafkaJS marks what it considers worth retrying.
  return typeof e.name === 'string' && e.name.startsWith('KafkaJS') && e.retriable === true;
}
