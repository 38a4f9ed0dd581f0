import { describe, expect, test } from 'vitest';
import { CircuitBreaker, RetryBudget } from '@kairos/core';

describe('circuit breaker with slow start', () => {
  const opts = { window: 10, minCalls: 4, failureRatio: 0.5, openMs: 1000, rampMs: 1000, initialShare: 0.1 };

  test('opens when dependency failures pass the ratio, and refuses work while open', () => {
    const b = new CircuitBreaker(opts);
    b.record(0, false);
    b.record(1, true);
    b.record(2, false);
    expect(b.state(3)).toBe('closed'); // fewer than minCalls
    b.record(3, true);
    expect(b.state(4)).toBe('open');
    expect(b.admit(500, () => 0)).toBe(false);
  });

  test('ramps traffic back up linearly, then closes', () => {
    const b = new CircuitBreaker(opts);
    for (let t = 0; t < 4; t++) b.record(t, true);
    expect(b.share(1003)).toBeCloseTo(0.1, 2); // ramp starts at openMs after opening
    expect(b.share(1503)).toBeCloseTo(0.55, 2);
    expect(b.admit(1503, () => 0.5)).toBe(true);
    expect(b.admit(1503, () => 0.6)).toBe(false);
    expect(b.state(2004)).toBe('closed');
    expect(b.share(2004)).toBe(1);
  });

  test('a dependency failure during the ramp opens it again', () => {
    const b = new CircuitBreaker(opts);
    for (let t = 0; t < 4; t++) b.record(t, true);
    b.record(1500, true);
    expect(b.state(1501)).toBe('open');
    expect(b.state(2600)).toBe('ramping');
  });

  test('non-dependency failures never open it', () => {
    const b = new CircuitBreaker(opts);
    for (let t = 0; t < 20; t++) b.record(t, false);
    expect(b.state(21)).toBe('closed');
  });

  test('bad options are clear errors', () => {
    expect(() => new CircuitBreaker({ window: 5, minCalls: 6 })).toThrow(/minCalls/);
    expect(() => new CircuitBreaker({ failureRatio: 0 })).toThrow(/failureRatio/);
  });
});

describe('retry budget', () => {
  test('first attempts earn a share of a retry; retries spend whole ones', () => {
    const budget = new RetryBudget({ ratio: 0.5, max: 2, initial: 0 });
    expect(budget.trySpend()).toBe(false);
    budget.earn();
    budget.earn();
    expect(budget.trySpend()).toBe(true);
    expect(budget.trySpend()).toBe(false);
    for (let i = 0; i < 10; i++) budget.earn();
    expect(budget.available).toBe(2); // capped
  });
});
