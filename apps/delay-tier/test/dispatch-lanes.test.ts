import { describe, expect, it } from 'vitest';
import { laneClasses } from '../src/dispatch-lanes.js';

describe('laneClasses', () => {
  it('gives critical a lane of its own and the other classes one together', () => {
    expect(laneClasses(['critical', 'default', 'cpu', 'io'])).toEqual([
      ['critical'],
      ['default', 'cpu', 'io'],
    ]);
    expect(laneClasses(['default', 'critical'])).toEqual([['critical'], ['default']]);
  });

  it('keeps one lane when there is nothing to separate', () => {
    expect(laneClasses(['critical'])).toEqual([['critical']]);
    expect(laneClasses(['default', 'io'])).toEqual([['default', 'io']]);
  });
});
