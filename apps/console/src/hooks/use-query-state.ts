import { useLocation } from 'preact-iso';
import { withQuery } from '../api/client.js';
import { firstPage, nextPage, pageIndex, previousPage, splitCursors, type Paged } from '../cursor-trail.js';

export interface QueryState {
  /** The page URL's query parameters. */
  readonly query: Record<string, string>;
  /** Goes to the same page with `changes` applied (undefined or '' removes a parameter). */
  readonly set: (changes: Record<string, string | undefined>) => void;
}

/** A page's filters and paging kept in its URL, so a link or the back button returns to them. */
export function useQueryState(): QueryState {
  const { path, query, route } = useLocation();
  return { query, set: (changes) => route(withQuery(path, { ...query, ...changes })) };
}

export interface CursorTrail {
  /** The cursor of the page shown (undefined: the first page). */
  readonly cursor: string | undefined;
  /** 0 for the first page. */
  readonly page: number;
  readonly first: () => void;
  readonly previous: () => void;
  readonly next: (cursor: string) => void;
}

/**
 * Cursor paging in the URL: `param` holds the cursors that led to the page shown (comma-separated,
 * the page's own last), so Previous and a reload work although the API only pages forward.
 */
export function useCursorTrail(state: QueryState, param: string): CursorTrail {
  const cursors = splitCursors(state.query[param]);
  const here: Paged = { cursor: cursors.at(-1), trail: cursors.slice(0, -1) };
  const to = (p: Paged) => state.set({ [param]: [...p.trail, ...(p.cursor ? [p.cursor] : [])].join(',') });
  return {
    cursor: here.cursor,
    page: pageIndex(here),
    first: () => to(firstPage(here)),
    previous: () => to(previousPage(here)),
    next: (cursor) => to(nextPage(here, cursor)),
  };
}
