import { describe, expect, test } from 'vitest';
import {
  describeFailure,
  KairosTaskError,
  MAX_ERROR_MESSAGE_CHARS,
  parseRetryAfter,
  PermanentError,
  ThrottledError,
  TransientError,
} from '@kairos/worker-sdk';

describe('failure classes', () => {
  test('each error a handler throws reports its class', () => {
    expect(describeFailure(new TransientError('gateway timeout'))).toEqual({
      error_class: 'TransientError',
      message: 'gateway timeout',
      failure_class: 'transient',
      retry_after_ms: null,
    });
    expect(describeFailure(new ThrottledError('429', { retryAfterMs: 1500 }))).toEqual({
      error_class: 'ThrottledError',
      message: '429',
      failure_class: 'throttled',
      retry_after_ms: 1500,
    });
    expect(describeFailure(new PermanentError('no such user'))).toEqual({
      error_class: 'PermanentError',
      message: 'no such user',
      failure_class: 'permanent',
      retry_after_ms: null,
    });
    expect(describeFailure(new KairosTaskError('ambiguous', 'socket closed after send'))).toMatchObject({
      error_class: 'KairosTaskError',
      failure_class: 'ambiguous',
    });
  });

  test('subclasses of the SDK errors keep their class and their own name', () => {
    class QuotaExceeded extends ThrottledError {
      constructor() {
        super('quota exceeded', { retryAfterMs: 60_000 });
        this.name = 'QuotaExceeded';
      }
    }
    expect(describeFailure(new QuotaExceeded())).toEqual({
      error_class: 'QuotaExceeded',
      message: 'quota exceeded',
      failure_class: 'throttled',
      retry_after_ms: 60_000,
    });
    const cause = new Error('ECONNRESET');
    expect(new TransientError('lost connection', { cause }).cause).toBe(cause);
  });

  test('anything else is ambiguous: the effect may have happened', () => {
    expect(describeFailure(new TypeError('x is undefined'))).toEqual({
      error_class: 'TypeError',
      message: 'x is undefined',
      failure_class: 'ambiguous',
      retry_after_ms: null,
    });
    expect(describeFailure('a string')).toMatchObject({ error_class: 'Error', message: 'a string' });
    expect(describeFailure(undefined)).toMatchObject({ message: 'undefined', failure_class: 'ambiguous' });
    // A class that is not one of ours, or Retry-After on a class that is not throttled, is ignored.
    expect(describeFailure({ failureClass: 'fatal' }).failure_class).toBe('ambiguous');
    expect(
      describeFailure(Object.assign(new Error('x'), { failureClass: 'transient', retryAfterMs: 9 })),
    ).toEqual({
      error_class: 'Error',
      message: 'x',
      failure_class: 'transient',
      retry_after_ms: null,
    });
  });

  test('errors from another copy of the SDK are recognised by their failureClass', () => {
    const foreign = Object.assign(new Error('slow down'), {
      failureClass: 'throttled',
      retryAfterMs: 2000.2,
    });
    expect(describeFailure(foreign)).toMatchObject({ failure_class: 'throttled', retry_after_ms: 2001 });
  });

  test('long messages are cut', () => {
    const d = describeFailure(new Error('x'.repeat(10_000)));
    expect(d.message).toHaveLength(MAX_ERROR_MESSAGE_CHARS);
    expect(d.message.endsWith('…')).toBe(true);
  });

  test('bad arguments are clear errors', () => {
    expect(() => new ThrottledError('x', { retryAfterMs: -1 })).toThrow(/retryAfterMs/);
    expect(() => new ThrottledError('x', { retryAfterMs: Number.NaN })).toThrow(/retryAfterMs/);
    // Seconds multiplied by 1,000 twice: refused where it is written, not after it reached the tracker.
    expect(() => new ThrottledError('x', { retryAfterMs: 30 * 1000 * 1000 * 1000 })).toThrow(
      /retryAfterMs must be a number of milliseconds from 0 to 86400000 \(24 h\), got 30000000000/,
    );
    expect(new ThrottledError('x', { retryAfterMs: 86_400_000 }).retryAfterMs).toBe(86_400_000);
    expect(() => new KairosTaskError('fatal' as never, 'x')).toThrow(/unknown failure class "fatal"/);
  });

  test('Retry-After headers: seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 29 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    // A dependency asking for more than 24 h gets 24 h (what ThrottledError accepts).
    expect(parseRetryAfter('999999999', now)).toBe(86_400_000);
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', now)).toBe(86_400_000);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
