import { describe, expect, test } from 'vitest';
import { canTransition, JOB_STATES, JOB_TRANSITIONS, LIVE_STATES, TERMINAL_STATES } from '../src/index.js';

describe('job state machine', () => {
  test('terminal states have no way out, live ones do', () => {
    for (const s of JOB_STATES) {
      const out = JOB_TRANSITIONS.filter((t) => t.from === s);
      expect(out.length > 0, s).toBe(!TERMINAL_STATES.has(s));
    }
    expect(new Set(LIVE_STATES)).toEqual(new Set(JOB_STATES.filter((s) => !TERMINAL_STATES.has(s))));
  });

  test('every state is reachable from creation', () => {
    const reached = new Set<string>();
    const walk = (from: string | null) => {
      for (const t of JOB_TRANSITIONS.filter((x) => x.from === from && !reached.has(x.to))) {
        reached.add(t.to);
        walk(t.to);
      }
    };
    walk(null);
    expect([...reached].sort()).toEqual([...JOB_STATES].sort());
  });

  test('RUNNING is entered only from QUEUED, by the tracker on a worker’s start', () => {
    expect(JOB_TRANSITIONS.filter((t) => t.to === 'RUNNING')).toEqual([
      expect.objectContaining({ from: 'QUEUED', by: 'tracker', query: 'recordStarts' }),
    ]);
    expect(canTransition('SCHEDULED', 'RUNNING')).toBe(false);
    expect(canTransition('QUEUED', 'RUNNING', 'tracker')).toBe(true);
    expect(canTransition('QUEUED', 'RUNNING', 'delay tier')).toBe(false);
  });

  test('QUEUED is written once, by the delay tier’s claim', () => {
    expect(new Set(JOB_TRANSITIONS.filter((t) => t.to === 'QUEUED').map((t) => t.by))).toEqual(
      new Set(['delay tier']),
    );
  });
});
