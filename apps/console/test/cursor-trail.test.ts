import { describe, expect, test } from 'vitest';
import { useCursorTrail, type QueryState } from '../src/hooks/use-query-state.js';

/** A URL query that `set` changes in place, as the router would on navigation. */
function fakeQuery(query: Record<string, string>): QueryState {
  const state: QueryState = {
    query,
    set: (changes) => {
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined || v === '') delete query[k];
        else query[k] = v;
      }
    },
  };
  return state;
}

describe('a list paged by a trail of cursors in one URL parameter', () => {
  test('Next appends the cursor, Previous drops it, First clears the parameter', () => {
    const q = fakeQuery({ state: 'ACTIVE' });
    expect(useCursorTrail(q, 'pages')).toMatchObject({ cursor: undefined, page: 0 });
    useCursorTrail(q, 'pages').next('a');
    useCursorTrail(q, 'pages').next('b');
    expect(q.query).toEqual({ state: 'ACTIVE', pages: 'a,b' });
    expect(useCursorTrail(q, 'pages')).toMatchObject({ cursor: 'b', page: 2 });
    useCursorTrail(q, 'pages').previous();
    expect(useCursorTrail(q, 'pages')).toMatchObject({ cursor: 'a', page: 1 });
    useCursorTrail(q, 'pages').next('c');
    useCursorTrail(q, 'pages').first();
    expect(q.query).toEqual({ state: 'ACTIVE' });
  });
});
