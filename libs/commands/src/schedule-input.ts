import { KairosError, type FieldError } from '@kairos/core';

/**
 * Validation of the schedule commands' small inputs (ids, bodies of resume, trigger and backfill,
 * list, runs and preview queries): pure, one VALIDATION error naming every bad field.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An idempotency key, as the HTTP API takes it. */
export const KEY = /^[\x21-\x7e]{1,256}$/;
const KEY_MESSAGE = '1 to 256 printable ASCII characters';
const MAX_LIST = 200;
const MAX_RUNS = 1000;

export function invalid(fields: FieldError[]): KairosError {
  return new KairosError('VALIDATION', `${fields.length} invalid field(s)`, { fields });
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function assertScheduleId(id: string): void {
  if (!UUID.test(id)) {
    throw new KairosError('VALIDATION', `schedule id "${id}" is not a UUID`, {
      fields: [{ field: 'id', message: 'not a UUID' }],
    });
  }
}

/** Splits an optional `idempotency_key` off a create body; a bad key is an error in `errors`. */
export function takeIdempotencyKey(
  body: unknown,
  field: string,
  errors: FieldError[],
): { key: string | null; rest: unknown } {
  if (!isObject(body) || !('idempotency_key' in body)) return { key: null, rest: body };
  const { idempotency_key: key, ...rest } = body;
  if (typeof key === 'string' && KEY.test(key)) return { key, rest };
  errors.push({ field, message: KEY_MESSAGE });
  return { key: null, rest };
}

/** An optional body that may only hold the given fields (resume, trigger). */
function smallBody(
  body: unknown,
  allowed: readonly string[],
): { b: Record<string, unknown>; errors: FieldError[] } {
  const b = body ?? {};
  if (!isObject(b)) throw invalid([{ field: '(body)', message: 'must be an object or empty' }]);
  const errors = Object.keys(b)
    .filter((k) => !allowed.includes(k))
    .map((k) => ({ field: k, message: 'unknown field' }));
  return { b, errors };
}

/** A resume: `{"catch_up": true}` treats what came due while paused as misfires. */
export function parseResumeBody(body: unknown): { catchUp: boolean } {
  const { b, errors } = smallBody(body, ['catch_up']);
  if (b.catch_up !== undefined && typeof b.catch_up !== 'boolean') {
    errors.push({ field: 'catch_up', message: 'must be a boolean' });
  }
  if (errors.length > 0) throw invalid(errors);
  return { catchUp: b.catch_up === true };
}

/** A trigger: `{"idempotency_key": "..."}` makes a retry create the run once. */
export function parseTriggerBody(body: unknown): { key: string | null } {
  const { b, errors } = smallBody(body, ['idempotency_key']);
  const key = b.idempotency_key;
  if (key !== undefined && !(typeof key === 'string' && KEY.test(key))) {
    errors.push({ field: 'idempotency_key', message: KEY_MESSAGE });
  }
  if (errors.length > 0) throw invalid(errors);
  return { key: typeof key === 'string' ? key : null };
}

/** A page of a tenant's schedules: `limit` (1–200, default 50) after the schedule id `after`. */
export function parseListPage(
  tenant: unknown,
  page: { limit?: unknown; after?: unknown },
): { tenant: string; limit: number; after: string | null } {
  const errors: FieldError[] = [];
  if (typeof tenant !== 'string' || tenant === '') errors.push({ field: 'tenant', message: 'required' });
  const limit = page.limit === undefined ? 50 : Number(page.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) {
    errors.push({ field: 'limit', message: `an integer from 1 to ${MAX_LIST}` });
  }
  if (page.after !== undefined && (typeof page.after !== 'string' || !UUID.test(page.after))) {
    errors.push({ field: 'after', message: 'a schedule id (the next_after of the previous page)' });
  }
  if (errors.length > 0) throw invalid(errors);
  return { tenant: tenant as string, limit, after: (page.after as string | undefined) ?? null };
}

/** A page of a schedule's runs: `limit` (1–1,000, default 50) before the occurrence time `before`. */
export function parseRunsPage(page: { limit?: unknown; before?: unknown }): {
  limit: number;
  before: Date | null;
} {
  const errors: FieldError[] = [];
  const limit = page.limit === undefined ? 50 : Number(page.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RUNS) {
    errors.push({ field: 'limit', message: `an integer from 1 to ${MAX_RUNS}` });
  }
  const before =
    page.before === undefined ? null : typeof page.before === 'string' ? Date.parse(page.before) : NaN;
  if (before !== null && Number.isNaN(before))
    errors.push({ field: 'before', message: 'an ISO-8601 date-time' });
  if (errors.length > 0) throw invalid(errors);
  return { limit, before: before === null ? null : new Date(before) };
}

/** A preview: `count` fire times (1–max, default 10) after `after` (default now). */
export function parsePreviewQuery(
  query: { count?: unknown; after?: unknown },
  now: Date,
  max: number,
): { count: number; after: number } {
  const errors: FieldError[] = [];
  const count = query.count === undefined ? 10 : Number(query.count);
  if (!Number.isInteger(count) || count < 1 || count > max) {
    errors.push({ field: 'count', message: `an integer from 1 to ${max}` });
  }
  const after =
    query.after === undefined
      ? now.getTime()
      : typeof query.after === 'string'
        ? Date.parse(query.after)
        : NaN;
  if (Number.isNaN(after)) errors.push({ field: 'after', message: 'an ISO-8601 date-time' });
  if (errors.length > 0) throw invalid(errors);
  return { count, after };
}

/** A backfill: the past range [from, to) and at most `max_count` occurrences (default and ceiling `ceiling`). */
export function parseBackfillBody(
  body: unknown,
  now: Date,
  ceiling: number,
): { from: number; to: number; maxCount: number } {
  if (!isObject(body)) throw invalid([{ field: '(body)', message: 'must be {"from": ..., "to": ...}' }]);
  const errors: FieldError[] = [];
  for (const k of Object.keys(body)) {
    if (!['from', 'to', 'max_count'].includes(k)) errors.push({ field: k, message: 'unknown field' });
  }
  const time = (field: 'from' | 'to'): number | undefined => {
    const v = body[field];
    const ms = typeof v === 'string' && /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) {
      errors.push({ field, message: 'an ISO-8601 date-time with an offset' });
      return undefined;
    }
    return ms;
  };
  const from = time('from');
  const to = time('to');
  const maxCount = body.max_count === undefined ? ceiling : body.max_count;
  if (typeof maxCount !== 'number' || !Number.isInteger(maxCount) || maxCount < 1 || maxCount > ceiling) {
    errors.push({ field: 'max_count', message: `an integer from 1 to ${ceiling}` });
  }
  if (from !== undefined && to !== undefined && to <= from) {
    errors.push({ field: 'to', message: 'must be after from' });
  }
  if (to !== undefined && to > now.getTime()) {
    errors.push({
      field: 'to',
      message: 'must not be in the future: the schedule generates its future occurrences itself',
    });
  }
  if (errors.length > 0 || from === undefined || to === undefined || typeof maxCount !== 'number') {
    throw invalid(errors);
  }
  return { from, to, maxCount };
}
