import { useLocation } from 'preact-iso';
import { withQuery } from '../api/client.js';

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
 * Cursor paging in the URL: `param` holds the cursors that led to the page shown (comma-separated),
 * so Previous and a reload work although the API only pages forward.
 */
export function useCursorTrail(state: QueryState, param: string): CursorTrail {
  const trail = (state.query[param] ?? '').split(',').filter((c) => c !== '');
  const to = (t: readonly string[]) => state.set({ [param]: t.join(',') });
  return {
    cursor: trail.at(-1),
    page: trail.length,
    first: () => to([]),
    previous: () => to(trail.slice(0, -1)),
    next: (cursor) => to([...trail, cursor]),
  };
}
