import { describe, expect, test } from 'vitest';
import { compileJobLimits, parseCreateJob } from '@kairos/core';

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
      },
    });
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
