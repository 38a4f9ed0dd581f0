import { describe, expect, test } from 'vitest';
import { AlertBook, CANARY_TENANT, canarySpec, canaryStalled, createJobShape } from '../src/index.js';

describe('canarySpec', () => {
  test('one per class and period: the same key within a period, a new one in the next', () => {
    const at = (iso: string) => canarySpec('io', new Date(iso), 60_000);
    const a = at('2026-12-03T10:00:01Z');
    expect(a).toMatchObject({
      tenantId: CANARY_TENANT,
      type: 'kairos.canary',
      resourceClass: 'io',
      maxAttempts: 1,
    });
    expect(at('2026-12-03T10:00:59Z').idempotencyKey).toBe(a.idempotencyKey);
    expect(at('2026-12-03T10:01:00Z').idempotencyKey).not.toBe(a.idempotencyKey);
    expect(canarySpec('cpu', new Date('2026-12-03T10:00:01Z'), 60_000).idempotencyKey).not.toBe(
      a.idempotencyKey,
    );
    expect(a.deadlineAt!.getTime() - a.dueAt.getTime()).toBe(300_000);
  });

  test('its tenant is one no request can name', () => {
    const r = createJobShape.safeParse({ tenant: CANARY_TENANT, type: 'x', resource_class: 'io' });
    expect(r.success).toBe(false);
  });
});

describe('canaryStalled', () => {
  test('counts from the last success, or from when watching began', () => {
    expect(canaryStalled(1000, 0, 120_000, 120_000)).toBe(false);
    expect(canaryStalled(1000, 0, 121_001, 120_000)).toBe(true);
    // Nothing yet: a tracker that just started waits a full stall time before alerting.
    expect(canaryStalled(null, 50_000, 160_000, 120_000)).toBe(false);
    expect(canaryStalled(null, 50_000, 170_001, 120_000)).toBe(true);
    // An old success before watching began does not make a fresh start alert at once.
    expect(canaryStalled(1000, 500_000, 510_000, 120_000)).toBe(false);
  });
});

describe('AlertBook', () => {
  const alert = { name: 'canary_stalled', labels: { resource_class: 'io' }, summary: 'io stalled' };
  test('raises once, clears once, keeps when it was raised', () => {
    const book = new AlertBook();
    const t0 = new Date('2026-12-03T10:00:00Z');
    const t1 = new Date('2026-12-03T10:05:00Z');
    expect(book.set(alert, false, t0)).toBeUndefined();
    expect(book.set(alert, true, t0)).toEqual({ alert, change: 'raised', since: t0 });
    expect(book.set(alert, true, t1)).toBeUndefined();
    expect(book.active()).toEqual([{ alert, since: t0 }]);
    expect(book.set({ ...alert, summary: 'other words' }, false, t1)).toEqual({
      alert,
      change: 'cleared',
      since: t0,
    });
    expect(book.active()).toEqual([]);
  });

  test('labels tell alerts apart, in any order', () => {
    const book = new AlertBook();
    const now = new Date();
    book.set({ name: 'a', labels: { x: '1', y: '2' }, summary: '' }, true, now);
    expect(book.set({ name: 'a', labels: { y: '2', x: '1' }, summary: '' }, true, now)).toBeUndefined();
    expect(book.set({ name: 'a', labels: { x: '2', y: '2' }, summary: '' }, true, now)?.change).toBe(
      'raised',
    );
    expect(book.active()).toHaveLength(2);
  });
});
