/**
 * Cursor paging when the API pages only forward: the cursors that led to the page shown are kept
 * (in the page's URL), so Previous, a link and a reload all work. One implementation for every list.
 */
export interface Paged {
  /** The cursor that led to this page; undefined on the first page. */
  readonly cursor: string | undefined;
  /** The cursors of the pages between the first and this one, so Previous can go back. */
  readonly trail: readonly string[];
}

/** Cursors kept in one URL parameter, comma-separated: a cursor (base-36, '.', uuid or instant) has no comma. */
export const splitCursors = (param: string | undefined): string[] =>
  (param ?? '').split(',').filter((c) => c !== '');

/** Which page this is, counting from 0 (the first). */
export const pageIndex = (s: Paged) => (s.cursor ? s.trail.length + 1 : 0);

/** The state one page on, given the current page's next cursor. */
export function nextPage<T extends Paged>(s: T, nextCursor: string): T {
  return { ...s, cursor: nextCursor, trail: s.cursor ? [...s.trail, s.cursor] : [] };
}

/** The state one page back: the last cursor of the trail, or the first page. */
export function previousPage<T extends Paged>(s: T): T {
  return { ...s, cursor: s.trail.at(-1), trail: s.trail.slice(0, -1) };
}

/** The first page (new filters or page size start over). */
export const firstPage = <T extends Paged>(s: T): T => ({ ...s, cursor: undefined, trail: [] });
