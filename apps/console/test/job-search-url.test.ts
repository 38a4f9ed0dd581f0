import { describe, expect, test } from 'vitest';
import { firstPage, nextPage, pageIndex, previousPage } from '../src/cursor-trail.js';
import { jobSearchUrl, parseJobSearch } from '../src/job-search-url.js';

const query = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);
const C1 = 'lz4w1k2a8g.01a23b9c-3357-71e8-8b1f-c5a30931d656';
const C2 = 'lz4w1k2a8h.01a23b9c-3357-7289-bb45-a45b84e37c7e';

describe('the jobs page state in its URL', () => {
  test('filters, page size and live survive the round trip; paging keys are not filters', () => {
    const s = parseJobSearch({ state: 'FAILED', type: 'a,b', limit: '5', live: '1', error: '' });
    expect(s).toEqual({
      filters: { state: 'FAILED', type: 'a,b' },
      limit: '5',
      cursor: undefined,
      trail: [],
      live: true,
    });
    expect(parseJobSearch(query(jobSearchUrl(s)))).toEqual(s);
    expect(jobSearchUrl(firstPage({ ...s, limit: '50', live: false }))).toBe(
      '/console/jobs?state=FAILED&type=a%2Cb',
    );
  });

  test('Next keeps the trail of cursors, Previous walks it back to the first page', () => {
    const p0 = parseJobSearch({ type: 'x' });
    const p1 = nextPage(p0, C1);
    const p2 = nextPage(p1, C2);
    expect([pageIndex(p0), pageIndex(p1), pageIndex(p2)]).toEqual([0, 1, 2]);
    expect(p2).toMatchObject({ cursor: C2, trail: [C1] });
    const back = parseJobSearch(query(jobSearchUrl(p2)));
    expect(back).toEqual(p2);
    expect(previousPage(back)).toEqual(p1);
    expect(previousPage(previousPage(back))).toMatchObject({ cursor: undefined, trail: [] });
    expect(pageIndex(firstPage(p2))).toBe(0);
  });
});
