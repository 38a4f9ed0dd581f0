import { withQuery } from './api/client.js';
import type { Filters } from './components/job-filters.js';
import { paths } from './paths.js';

/** The jobs page's state, all of it in its URL's query so a link or the back button restores it. */
export interface JobSearchState {
  /** Every filter as the API names it (`state`, `type`, `due_after`…). */
  readonly filters: Filters;
  /** Jobs per page, as the API's `limit` (it validates: 1–500). */
  readonly limit: string;
  /** The `next_cursor` that led to this page; undefined on the first page. */
  readonly cursor: string | undefined;
  /** The cursors of the pages between the first and this one, so Previous can go back. */
  readonly trail: readonly string[];
  readonly live: boolean;
}

export const PAGE_SIZES = ['5', '10', '25', '50', '100', '200'] as const;
export const DEFAULT_PAGE_SIZE = '50';

/** Query parameters of the page that are not filters of the search. */
const PAGING = new Set(['limit', 'cursor', 'trail', 'live']);

export function parseJobSearch(query: Record<string, string>): JobSearchState {
  const filters = Object.fromEntries(Object.entries(query).filter(([k, v]) => !PAGING.has(k) && v !== ''));
  return {
    filters,
    limit: query.limit || DEFAULT_PAGE_SIZE,
    cursor: query.cursor || undefined,
    // A cursor holds only base-36 digits, '.', and a uuid: never a comma.
    trail: query.trail ? query.trail.split(',').filter(Boolean) : [],
    live: query.live === '1',
  };
}

/** The page's address for a search state: the jobs page's, or (`base`) the dead letters'. */
export function jobSearchUrl(s: JobSearchState, base: string = paths.jobs): string {
  return withQuery(base, {
    ...s.filters,
    limit: s.limit === DEFAULT_PAGE_SIZE ? undefined : s.limit,
    cursor: s.cursor,
    trail: s.cursor ? s.trail.join(',') : undefined,
    live: s.live ? '1' : undefined,
  });
}

/** Which page this is, counting from 0 (the newest). */
export const pageIndex = (s: JobSearchState) => (s.cursor ? s.trail.length + 1 : 0);

/** The state one page on (older jobs), given the current page's `next_cursor`. */
export function nextPage(s: JobSearchState, nextCursor: string): JobSearchState {
  return { ...s, cursor: nextCursor, trail: s.cursor ? [...s.trail, s.cursor] : [] };
}

/** The state one page back (newer jobs): the last cursor of the trail, or the first page. */
export function previousPage(s: JobSearchState): JobSearchState {
  return { ...s, cursor: s.trail.at(-1), trail: s.trail.slice(0, -1) };
}

/** The first page of a search (new filters or page size start over). */
export const firstPage = (s: JobSearchState): JobSearchState => ({ ...s, cursor: undefined, trail: [] });
