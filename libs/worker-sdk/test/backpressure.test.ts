import { describe, expect, test } from 'vitest';
import { Backpressure } from '../src/backpressure.js';
import { bufferBudgets } from '../src/buffer-budgets.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('backpressure', () => {
  test('without reservations one budget holds every class, as before', () => {
    expect(bufferBudgets(['critical', 'default'], {}, 10, 4096)).toEqual([
      { classes: ['critical', 'default'], max: 4096 },
    ]);
    expect(bufferBudgets(['critical', 'default'], { critical: 0 }, 10, 4096)).toEqual([
      { classes: ['critical', 'default'], max: 4096 },
    ]);
  });

  test('with reservations the buffer is split like the slots', () => {
    expect(bufferBudgets(['batch', 'critical', 'default'], { critical: 6 }, 10, 4096)).toEqual([
      { classes: ['critical'], max: 2457 },
      { classes: ['batch', 'default'], max: 1638 },
    ]);
    expect(bufferBudgets(['critical', 'io'], { critical: 2, io: 1 }, 4, 8)).toEqual([
      { classes: ['critical'], max: 4 },
      { classes: ['io'], max: 2 },
    ]);
  });

  test('a flood pauses only its own budget; each resumes once a quarter is through', () => {
    const events: string[] = [];
    const early = new Map<string, number>();
    const bp = new Backpressure({
      budgets: bufferBudgets(['critical', 'default', 'io'], { critical: 2 }, 4, 8),
      early: (rc) => early.get(rc) ?? 0,
      pause: (cs) => events.push(`pause ${cs.join('+')}`),
      resume: (cs) => events.push(`resume ${cs.join('+')}`),
      logger: silent,
    });
    for (let i = 0; i < 3; i++) bp.taken('default', +1);
    bp.check();
    expect(events).toEqual([]);
    bp.taken('io', +1); // default and io share the 4 of the 2 shared slots
    bp.check();
    expect(events).toEqual(['pause default+io']);
    for (let i = 0; i < 3; i++) bp.taken('critical', +1);
    bp.check();
    expect(events).toEqual(['pause default+io']); // critical still fetched
    early.set('critical', 1);
    bp.taken('critical', +1); // 4 taken, 1 held for its due time: 3 count
    bp.check();
    expect(events).toEqual(['pause default+io']);
    early.set('critical', 0);
    bp.check();
    expect(events).toEqual(['pause default+io', 'pause critical']);
    bp.taken('default', -1);
    bp.check();
    expect(events.at(-1)).toBe('resume default+io'); // 3 of 4: a quarter through
    bp.taken('critical', -1);
    bp.check();
    expect(events.at(-1)).toBe('resume critical');
  });
});
