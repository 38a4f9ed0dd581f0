import ms from 'ms';
import { UsageError } from './config.js';

/**
 * An instant given as ISO 8601 (`2026-12-03T09:00:00Z`) or as a duration ago (`15m`, `2h`, `3d`),
 * in ms since the epoch.
 */
export function instantOf(text: string, option: string, now = Date.now()): number {
  // A unit is required: a bare number could as well be an epoch as milliseconds.
  const ago = /^\d+(\.\d+)?\s*[a-z]+$/i.test(text) ? ms(text as ms.StringValue) : undefined;
  if (typeof ago === 'number' && Number.isFinite(ago)) return now - ago;
  const at = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(at)) return at;
  throw new UsageError(
    `${option} must be an ISO 8601 time (2026-12-03T09:00:00Z) or a duration ago (15m, 2h, 3d), got ${JSON.stringify(text)}`,
  );
}

/** A non-negative integer option. */
export function countOf(text: string, option: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`${option} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}
