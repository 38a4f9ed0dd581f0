import { z } from 'zod';
import { KairosError } from './errors.js';
import { JOB_STATES, type JobState } from './job.js';
import { storableText } from './storable.js';
import { FAILURE_CLASSES } from './retry.js';
import { fieldErrorsOf } from './zod-errors.js';

/** Most jobs one page of a search holds. */
export const MAX_SEARCH_LIMIT = 500;

const list = <T extends string>(item: z.ZodType<T, string>) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()))
    .pipe(z.array(item).min(1).max(16));
const time = z.iso.datetime({ offset: true });
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * The query string of `GET /v1/jobs` (and of the dead-letter list): every filter optional and
 * combined with AND; comma-separated lists mean any of them. Also the source of its OpenAPI
 * parameters.
 */
export const jobSearchQuery = z
  .object({
    tenant: z.string().min(1).max(64).regex(NAME).optional(),
    state: list(z.enum(JOB_STATES)).optional(),
    type: list(z.string().min(1).max(128).regex(NAME)).optional(),
    resource_class: list(z.string().min(1).max(32)).optional(),
    schedule_id: z.uuid().optional(),
    failure_class: list(z.enum(FAILURE_CLASSES)).optional(),
    /** Case-insensitive text the last error contains. */
    error: z.string().min(1).max(200).superRefine(storableText).optional(),
    due_after: time.optional(),
    due_before: time.optional(),
    created_after: time.optional(),
    created_before: time.optional(),
    finished_after: time.optional(),
    finished_before: time.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
    /** The next_cursor of the previous page. */
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();

/** A validated search: the tenant always set (from the key or the query). */
export interface JobSearch {
  readonly tenant: string;
  readonly states?: readonly JobState[];
  readonly types?: readonly string[];
  readonly resourceClasses?: readonly string[];
  readonly scheduleId?: string;
  readonly failureClasses?: readonly string[];
  readonly errorText?: string;
  readonly dueAfter?: Date;
  readonly dueBefore?: Date;
  readonly createdAfter?: Date;
  readonly createdBefore?: Date;
  readonly finishedAfter?: Date;
  readonly finishedBefore?: Date;
  readonly limit: number;
  /** Where the previous page ended: newest first, so this page holds older jobs. */
  readonly after?: SearchCursor;
}

/** A position in the newest-first order: creation time (µs since the epoch) and id. */
export interface SearchCursor {
  readonly createdUs: bigint;
  readonly id: string;
}

/** Opaque to clients (URL-safe): the creation time in base 36, then the id. */
export function encodeCursor(c: SearchCursor): string {
  return `${c.createdUs.toString(36)}.${c.id}`;
}

function decodeCursor(s: string): SearchCursor | undefined {
  const m = /^([0-9a-z]{1,13})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(s);
  if (!m?.[1] || !m[2]) return undefined;
  const us = [...m[1]].reduce((n, ch) => n * 36n + BigInt(parseInt(ch, 36)), 0n);
  return { createdUs: us, id: m[2] };
}

const invalid = (field: string, message: string) =>
  new KairosError('VALIDATION', `invalid ${field}`, { fields: [{ field, message }] });

/**
 * Validates a search query. `tenant` is the one the caller's key allows (undefined: any, and then
 * the query must name one). Throws VALIDATION naming every bad parameter.
 */
export function parseJobSearch(query: unknown, tenant: string | undefined, defaultLimit = 50): JobSearch {
  const parsed = jobSearchQuery.safeParse(query ?? {});
  if (!parsed.success) {
    throw new KairosError('VALIDATION', 'invalid search parameters', {
      fields: fieldErrorsOf(parsed.error, ''),
    });
  }
  const q = parsed.data;
  const who = tenant ?? q.tenant;
  if (who === undefined)
    throw invalid('tenant', 'required with a key of every tenant: search one tenant at a time');
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  if (q.cursor !== undefined && !after) throw invalid('cursor', 'not a cursor of this search (next_cursor)');
  const at = (s: string | undefined) => (s === undefined ? undefined : new Date(s));
  const search: JobSearch = {
    tenant: who,
    limit: q.limit ?? defaultLimit,
    ...(q.state && { states: q.state }),
    ...(q.type && { types: q.type }),
    ...(q.resource_class && { resourceClasses: q.resource_class }),
    ...(q.schedule_id && { scheduleId: q.schedule_id }),
    ...(q.failure_class && { failureClasses: q.failure_class }),
    ...(q.error && { errorText: q.error }),
    ...(after && { after }),
  };
  const ranges = {
    dueAfter: at(q.due_after),
    dueBefore: at(q.due_before),
    createdAfter: at(q.created_after),
    createdBefore: at(q.created_before),
    finishedAfter: at(q.finished_after),
    finishedBefore: at(q.finished_before),
  };
  for (const [from, to, name] of [
    ['dueAfter', 'dueBefore', 'due'],
    ['createdAfter', 'createdBefore', 'created'],
    ['finishedAfter', 'finishedBefore', 'finished'],
  ] as const) {
    const a = ranges[from];
    const b = ranges[to];
    if (a && b && a.getTime() >= b.getTime()) throw invalid(`${name}_before`, `must be after ${name}_after`);
  }
  return Object.assign(search, Object.fromEntries(Object.entries(ranges).filter(([, v]) => v !== undefined)));
}
