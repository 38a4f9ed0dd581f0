import { withQuery } from './api/client.js';
import type { Filters } from './components/job-filters.js';
import { splitCursors, type Paged } from './cursor-trail.js';
import { paths } from './paths.js';

/** The jobs page's state, all of it in its URL's query so a link or the back button restores it. */
export interface JobSearchState extends Paged {
  /** Every filter as the API names it (`state`, `type`, `due_after`…). */
  readonly filters: Filters;
  /** Jobs per page, as the API's `limit` (it validates: 1–500). */
  readonly limit: string;
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
    trail: splitCursors(query.trail),
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
