import { describe, expect, test } from 'vitest';
import { compileJobLimits, DEFAULT_RETRY_BACKOFF, parseCreateJob } from '@kairos/core';

const now = new Date('2026-11-29T12:00:00Z');
const limits = compileJobLimits({ maxPayloadBytes: 100 });
const ok = { tenant: 'acme', type: 'email.send', resource_class: 'default', payload: { to: 'a@b.c' } };

describe('parseCreateJob', () => {
  test('a minimal request runs now with the default attempts', () => {
    const r = parseCreateJob(ok, now, limits);
    expect(r).toEqual({
      ok: true,
      value: {
        tenantId: 'acme',
        type: 'email.send',
        resourceClass: 'default',
        payload: '{"to":"a@b.c"}',
        dueAt: now,
        deadlineAt: null,
        idempotencyKey: null,
        maxAttempts: 3,
        retry: { baseMs: 1000, capMs: 300_000, jitterMs: 1000 },
      },
    });
    expect(r.ok && r.value.retry).toEqual(DEFAULT_RETRY_BACKOFF);
  });

  test('retry sets the backoff; a field left out takes a default consistent with the others', () => {
    const retry = (body: unknown) => {
      const r = parseCreateJob({ ...ok, retry: body }, now, limits);
      return r.ok ? r.value.retry : r.errors;
    };
    expect(retry({ base_ms: 200, cap_ms: 2000, jitter_ms: 0 })).toEqual({
      baseMs: 200,
      capMs: 2000,
      jitterMs: 0,
    });
    expect(retry({})).toEqual(DEFAULT_RETRY_BACKOFF);
    expect(retry({ jitter_ms: 5 })).toEqual({ ...DEFAULT_RETRY_BACKOFF, jitterMs: 5 });
    // A base above the default cap raises the cap with it; a cap below the default base lowers it.
    expect(retry({ base_ms: 600_000 })).toEqual({ baseMs: 600_000, capMs: 600_000, jitterMs: 1000 });
    expect(retry({ cap_ms: 500 })).toEqual({ baseMs: 500, capMs: 500, jitterMs: 1000 });
    expect(retry({ base_ms: 0, cap_ms: 0 })).toEqual({ baseMs: 0, capMs: 0, jitterMs: 1000 });
  });

  test('delay_ms and due_at set the due time', () => {
    const delayed = parseCreateJob({ ...ok, delay_ms: 1500 }, now, limits);
    expect(delayed.ok && delayed.value.dueAt.toISOString()).toBe('2026-11-29T12:00:01.500Z');
    const at = parseCreateJob({ ...ok, due_at: '2026-11-29T14:00:00+01:00' }, now, limits);
    expect(at.ok && at.value.dueAt.toISOString()).toBe('2026-11-29T13:00:00.000Z');
  });

  test.each([
    [{ ...ok, tenant: '' }, 'tenant'],
    [{ ...ok, resource_class: 'gpu' }, 'resource_class'],
    [{ ...ok, due_at: 'tomorrow' }, 'due_at'],
    [{ ...ok, due_at: '2026-11-27T00:00:00Z' }, 'due_at'],
    [{ ...ok, delay_ms: -1 }, 'delay_ms'],
    [{ ...ok, delay_ms: 5, due_at: '2026-11-29T13:00:00Z' }, 'due_at'],
    [{ ...ok, deadline_at: '2026-11-29T11:00:00Z' }, 'deadline_at'],
    [{ ...ok, max_attempts: 0 }, 'max_attempts'],
    [{ ...ok, max_attempts: 1000 }, 'max_attempts'],
    [{ ...ok, payload: { big: 'x'.repeat(200) } }, 'payload'],
    [{ ...ok, colour: 'red' }, 'colour'],
    [{ ...ok, retry: 5 }, 'retry'],
    [{ ...ok, retry: null }, 'retry'],
    [{ ...ok, retry: { base_ms: -1 } }, 'retry.base_ms'],
    [{ ...ok, retry: { base_ms: 1.5 } }, 'retry.base_ms'],
    [{ ...ok, retry: { cap_ms: '100' } }, 'retry.cap_ms'],
    [{ ...ok, retry: { jitter_ms: 86_400_001 } }, 'retry.jitter_ms'],
    [{ ...ok, retry: { base_ms: 2000, cap_ms: 1000 } }, 'retry.cap_ms'],
    [{ ...ok, retry: { factor: 2 } }, 'retry.factor'],
  ])('rejects %j naming field %s', (input, field) => {
    const r = parseCreateJob(input, now, limits, 'jobs.2');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field)).toContain(`jobs.2.${field}`);
  });

  test('reports every failing field at once', () => {
    const r = parseCreateJob({ tenant: 'acme' }, now, limits);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field).sort()).toEqual(['resource_class', 'type']);
  });

  test('limits are validated when compiled', () => {
    expect(() => compileJobLimits({ maxPayloadBytes: -1 })).toThrow(/maxPayloadBytes/);
    expect(() => compileJobLimits({ resourceClasses: [] })).toThrow(/resourceClasses/);
  });
});
