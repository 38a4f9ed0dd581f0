import { describe, expect, test } from 'vitest';
import { UsageError } from '../src/config.js';
import { rewindTarget } from '../src/dlq-rewind.js';
import { instantOf } from '../src/times.js';
import { tailStart } from '../src/topics.js';

const NOW = Date.parse('2026-12-03T12:00:00Z');

describe('instantOf', () => {
  test('a duration ago or an ISO 8601 time', () => {
    expect(instantOf('15m', '--since', NOW)).toBe(NOW - 15 * 60_000);
    expect(instantOf('2h', '--since', NOW)).toBe(NOW - 7_200_000);
    expect(instantOf('3d', '--since', NOW)).toBe(NOW - 3 * 86_400_000);
    expect(instantOf('2026-12-03T09:00:00Z', '--since', NOW)).toBe(Date.parse('2026-12-03T09:00:00Z'));
    expect(instantOf('2026-12-03T09:00:00+01:00', '--since', NOW)).toBe(Date.parse('2026-12-03T08:00:00Z'));
  });

  test.each(['yesterday', '', '15 parsecs', '100', '12/03/2026', 'NaN', '2026-13-45T99:00:00Z'])(
    '%j is a usage error naming the option',
    (bad) => {
      expect(() => instantOf(bad, '--since', NOW)).toThrow(UsageError);
      expect(() => instantOf(bad, '--since', NOW)).toThrow(/--since must be an ISO 8601 time/);
    },
  );
});

describe('tailStart', () => {
  test('the last 10 of each partition by default; beginning, an offset or a time', () => {
    expect(tailStart({ last: '10' })).toEqual({ from: 'end', last: 10 });
    expect(tailStart({ last: '3', from: 'end' })).toEqual({ from: 'end', last: 3 });
    expect(tailStart({ last: '10', from: 'beginning' })).toEqual({ from: 'beginning' });
    expect(tailStart({ last: '10', from: '4200' })).toEqual({ offset: 4200 });
    expect(tailStart({ last: '10', since: '1h' }, NOW)).toEqual({ timestamp: NOW - 3_600_000 });
  });

  test('contradictions and malformed numbers are usage errors', () => {
    expect(() => tailStart({ last: '10', from: 'beginning', since: '1h' })).toThrow(/not both/);
    expect(() => tailStart({ last: '10', from: '-5' })).toThrow(UsageError);
    expect(() => tailStart({ last: 'ten' })).toThrow(/--last must be a non-negative integer/);
  });
});

describe('rewindTarget', () => {
  test('exactly one of --since, --offset, --earliest', () => {
    expect(rewindTarget({ group: 'g', since: '1h' }, NOW)).toEqual({ timestamp: NOW - 3_600_000 });
    expect(rewindTarget({ group: 'g', offset: '7' })).toEqual({ offset: 7 });
    expect(rewindTarget({ group: 'g', earliest: true })).toBe('earliest');
    expect(() => rewindTarget({ group: 'g' })).toThrow(/exactly one/);
    expect(() => rewindTarget({ group: 'g', since: '1h', earliest: true })).toThrow(/exactly one/);
    expect(() => rewindTarget({ group: 'g', offset: '1.5' })).toThrow(UsageError);
  });
});
