import { describe, expect, test } from 'vitest';
import { Admission } from '../src/admission.js';

const always = () => 0; // random() below every share: admitted whenever the share is above 0
const never = () => 0.999_999;

describe('admission: breaker per job type, retry budget', () => {
  test('a failing dependency opens the breaker of its job type only; it slowly starts again, then closes', () => {
    const changes: string[] = [];
    const a = new Admission({
      breaker: { window: 10, minCalls: 4, failureRatio: 0.5, openMs: 1000, rampMs: 1000, initialShare: 0.1 },
      retryBudget: false,
      onBreakerChange: (type, from, to) => changes.push(`${type}:${from}->${to}`),
    });
    for (let i = 0; i < 4; i++) {
      expect(a.admit('pay', 1, 0, always)).toBe(true);
      a.record('pay', true, 0);
    }
    expect(a.state('pay', 1)).toBe('open');
    expect(a.admit('pay', 1, 500, always)).toBe(false);
    expect(a.admit('mail', 1, 500, never)).toBe(true); // another type is unaffected
    // Ramping: a growing share (0.1 at the start) is admitted.
    expect(a.admit('pay', 1, 1000, () => 0.05)).toBe(true);
    expect(a.admit('pay', 1, 1000, () => 0.5)).toBe(false);
    expect(a.admit('pay', 1, 1900, () => 0.5)).toBe(true);
    expect(a.state('pay', 2001)).toBe('closed');
    a.admit('pay', 1, 2001, always);
    expect(changes).toEqual(['pay:closed->open', 'pay:open->ramping', 'pay:ramping->closed']);
  });

  test('a dependency failure while ramping opens it again', () => {
    const a = new Admission({
      breaker: { window: 4, minCalls: 2, openMs: 100, rampMs: 1000 },
      retryBudget: false,
    });
    a.record('pay', true, 0);
    a.record('pay', true, 0);
    expect(a.state('pay', 150)).toBe('ramping');
    a.record('pay', true, 150);
    expect(a.state('pay', 200)).toBe('open');
  });

  test('retries spend the budget first attempts fill; a trickle keeps them moving', () => {
    const a = new Admission({ breaker: false, retryBudget: { ratio: 0.5, max: 10, minPerSecond: 1 } });
    const t0 = Date.now();
    let admitted = 0;
    for (let i = 0; i < 20; i++) if (a.admit('pay', 2, t0, always)) admitted++;
    expect(admitted).toBe(10); // the initial budget
    expect(a.admit('pay', 2, t0, always)).toBe(false);
    expect(a.admit('pay', 1, t0, always)).toBe(true); // a first attempt earns half a retry
    expect(a.admit('pay', 1, t0, always)).toBe(true);
    expect(a.admit('pay', 2, t0, always)).toBe(true);
    expect(a.admit('pay', 2, t0, always)).toBe(false);
    expect(a.admit('pay', 2, t0 + 1000, always)).toBe(true); // one second's trickle
  });
});
