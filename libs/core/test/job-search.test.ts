import { expect, test } from 'vitest';
import { encodeCursor, isKairosError, parseJobSearch } from '../src/index.js';

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (isKairosError(err, 'VALIDATION')) return err.fields.map((f) => f.field).sort();
    throw err;
  }
  return [];
}

test('filters parse into a search of one tenant; lists split on commas', () => {
  expect(
    parseJobSearch(
      { state: 'FAILED, EXPIRED', type: 'a.b', limit: '500', failure_class: 'permanent' },
      'acme',
    ),
  ).toEqual({
    tenant: 'acme',
    limit: 500,
    states: ['FAILED', 'EXPIRED'],
    types: ['a.b'],
    failureClasses: ['permanent'],
  });
  expect(parseJobSearch({ tenant: 'globex' }, undefined)).toEqual({ tenant: 'globex', limit: 50 });
  expect(parseJobSearch({ due_after: '2026-01-01T00:00:00Z' }, 'acme').dueAfter).toEqual(
    new Date('2026-01-01T00:00:00Z'),
  );
});

test('a cursor goes round; a made-up one is named', () => {
  const c = { createdUs: 1_764_000_000_123_456n, id: '01937a2b-0000-7000-8000-000000000001' };
  expect(parseJobSearch({ cursor: encodeCursor(c) }, 'acme').after).toEqual(c);
  expect(fieldsOf(() => parseJobSearch({ cursor: 'abc' }, 'acme'))).toEqual(['cursor']);
});

test('every bad parameter is named; a key of every tenant must name one; ranges must be ranges', () => {
  expect(
    fieldsOf(() => parseJobSearch({ state: 'DONE', limit: '0', due_before: 'soon', colour: 'red' }, 'acme')),
  ).toEqual(['colour', 'due_before', 'limit', 'state.0']);
  expect(fieldsOf(() => parseJobSearch({}, undefined))).toEqual(['tenant']);
  expect(
    fieldsOf(() =>
      parseJobSearch(
        { created_after: '2026-02-01T00:00:00Z', created_before: '2026-01-01T00:00:00Z' },
        'acme',
      ),
    ),
  ).toEqual(['created_before']);
});
