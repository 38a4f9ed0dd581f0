import { describe, expect, test } from 'vitest';
import { backoffMs, compileRetryPolicy, decideRetry, MAX_RETRY_DELAY_MS } from '@kairos/core';

const policy = compileRetryPolicy({ maxAttempts: 5, baseMs: 100, capMs: 1000, jitterMs: 50 });
const zero = () => 0;
const top = () => 0.999999;

describe('retry decisions', () => {
  test('backoff doubles from base, adds bounded jitter, and stops at the cap', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffMs(policy, a, zero))).toEqual([100, 200, 400, 800, 1000]);
    expect(backoffMs(policy, 1, top)).toBe(150);
    expect(backoffMs(policy, 5, top)).toBe(1000);
    for (let i = 0; i < 200; i++) {
      const d = backoffMs(policy, 2, Math.random);
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(250);
    }
  });

  test('transient and ambiguous failures retry until attempts run out', () => {
    expect(decideRetry(policy, 1, { class: 'transient' }, zero)).toEqual({ retry: true, delayMs: 100 });
    expect(decideRetry(policy, 3, { class: 'ambiguous' }, zero)).toEqual({ retry: true, delayMs: 400 });
    expect(decideRetry(policy, 5, { class: 'transient' }, zero)).toEqual({
      retry: false,
      reason: 'exhausted',
    });
  });

  test('permanent failures never retry', () => {
    expect(decideRetry(policy, 1, { class: 'permanent' }, zero)).toEqual({
      retry: false,
      reason: 'permanent',
    });
  });

  test('throttled failures wait at least Retry-After, and at least the backoff', () => {
    expect(decideRetry(policy, 1, { class: 'throttled', retryAfterMs: 30_000 }, zero)).toEqual({
      retry: true,
      delayMs: 30_000,
    });
    expect(decideRetry(policy, 3, { class: 'throttled', retryAfterMs: 10 }, zero)).toEqual({
      retry: true,
      delayMs: 400,
    });
  });

  test('a Retry-After beyond 24 h is capped at 24 h: a due time stays a date (issue 31: 9e15 ms crashed the tracker)', () => {
    for (const retryAfterMs of [MAX_RETRY_DELAY_MS + 1, 9e15, Number.MAX_SAFE_INTEGER, Infinity]) {
      expect(decideRetry(policy, 1, { class: 'throttled', retryAfterMs }, zero)).toEqual({
        retry: true,
        delayMs: MAX_RETRY_DELAY_MS,
      });
    }
  });

  test('a bad policy is a clear error', () => {
    expect(() => compileRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => compileRetryPolicy({ baseMs: 2000, capMs: 1000 })).toThrow(/capMs/);
    expect(() => compileRetryPolicy({ jitterMs: -1 })).toThrow(/jitterMs/);
  });
});
