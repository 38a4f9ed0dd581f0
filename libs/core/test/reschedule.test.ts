import { describe, expect, test } from 'vitest';
import { compileJobLimits, parseReschedule } from '@kairos/core';

const now = new Date('2026-11-29T12:00:00Z');
const limits = compileJobLimits();
const noDeadline = { dueAt: new Date('2026-11-29T13:00:00Z'), deadlineAt: null };
const withDeadline = {
  dueAt: new Date('2026-11-29T13:00:00Z'),
  deadlineAt: new Date('2026-11-29T15:00:00Z'),
};

describe('parseReschedule', () => {
  test('due_at sets the new due time; the current deadline is kept when deadline_at is absent', () => {
    expect(parseReschedule({ due_at: '2026-11-29T15:30:00+01:00' }, now, limits, withDeadline)).toEqual({
      ok: true,
      value: { dueAt: new Date('2026-11-29T14:30:00Z'), deadlineAt: withDeadline.deadlineAt },
    });
  });

  test('delay_ms counts from now; 0 means now', () => {
    const delayed = parseReschedule({ delay_ms: 1500 }, now, limits, noDeadline);
    expect(delayed).toEqual({
      ok: true,
      value: { dueAt: new Date('2026-11-29T12:00:01.500Z'), deadlineAt: null },
    });
    const zero = parseReschedule({ delay_ms: 0 }, now, limits, noDeadline);
    expect(zero.ok && zero.value.dueAt).toEqual(now);
  });

  test('deadline_at replaces the deadline, null clears it', () => {
    const later = parseReschedule(
      { due_at: '2026-11-30T00:00:00Z', deadline_at: '2026-11-30T01:00:00Z' },
      now,
      limits,
      withDeadline,
    );
    expect(later.ok && later.value.deadlineAt).toEqual(new Date('2026-11-30T01:00:00Z'));
    const cleared = parseReschedule(
      { due_at: '2026-11-30T00:00:00Z', deadline_at: null },
      now,
      limits,
      withDeadline,
    );
    expect(cleared).toEqual({
      ok: true,
      value: { dueAt: new Date('2026-11-30T00:00:00Z'), deadlineAt: null },
    });
  });

  test('a deadline equal to the new due time is accepted', () => {
    const r = parseReschedule({ due_at: '2026-11-29T15:00:00Z' }, now, limits, withDeadline);
    expect(r.ok).toBe(true);
  });

  test('due time bounds are those of job creation (inclusive)', () => {
    const past = new Date(now.getTime() - limits.maxPastMs).toISOString();
    const future = new Date(now.getTime() + limits.maxFutureMs).toISOString();
    expect(parseReschedule({ due_at: past }, now, limits, noDeadline).ok).toBe(true);
    expect(parseReschedule({ due_at: future }, now, limits, noDeadline).ok).toBe(true);
    expect(parseReschedule({ delay_ms: limits.maxFutureMs }, now, limits, noDeadline).ok).toBe(true);
  });

  test.each([
    ['both due_at and delay_ms', { due_at: '2026-11-29T13:00:00Z', delay_ms: 5 }, 'due_at'],
    ['neither due_at nor delay_ms', {}, 'due_at'],
    ['only a deadline', { deadline_at: '2026-11-30T00:00:00Z' }, 'due_at'],
    ['due_at not a date', { due_at: 'tomorrow' }, 'due_at'],
    ['due_at without an offset', { due_at: '2026-11-29T13:00:00' }, 'due_at'],
    ['due_at too far in the past', { due_at: '2026-11-27T00:00:00Z' }, 'due_at'],
    ['due_at too far in the future', { due_at: '2032-01-01T00:00:00Z' }, 'due_at'],
    ['delay_ms negative', { delay_ms: -1 }, 'delay_ms'],
    ['delay_ms fractional', { delay_ms: 1.5 }, 'delay_ms'],
    ['delay_ms a string', { delay_ms: '1000' }, 'delay_ms'],
    ['delay_ms too far in the future', { delay_ms: limits.maxFutureMs + 1 }, 'delay_ms'],
    ['deadline_at not a date', { delay_ms: 0, deadline_at: 'later' }, 'deadline_at'],
    [
      'deadline_at before the new due time',
      { due_at: '2026-11-29T13:00:00Z', deadline_at: '2026-11-29T12:59:59Z' },
      'deadline_at',
    ],
    ['an unknown field', { delay_ms: 0, priority: 5 }, 'priority'],
    ['a job field that cannot change', { delay_ms: 0, payload: {} }, 'payload'],
  ])('rejects %s naming %s', (_what, input, field) => {
    const r = parseReschedule(input, now, limits, noDeadline);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.field)).toContain(field);
  });

  test.each([null, [], 'soon', 42])('rejects a body that is not an object (%j) as (body)', (input) => {
    const r = parseReschedule(input, now, limits, noDeadline);
    expect(r).toEqual({ ok: false, errors: [{ field: '(body)', message: expect.any(String) }] });
  });

  test('a kept deadline before the new due time asks for a new deadline_at or null', () => {
    const r = parseReschedule({ due_at: '2026-11-29T16:00:00Z' }, now, limits, withDeadline);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]!.field).toBe('deadline_at');
      expect(r.errors[0]!.message).toContain('2026-11-29T15:00:00.000Z');
      expect(r.errors[0]!.message).toMatch(/deadline_at.*null/);
    }
  });

  test('a given deadline before the new due time also names deadline_at and the way out', () => {
    const r = parseReschedule(
      { delay_ms: 3600_000, deadline_at: '2026-11-29T12:30:00Z' },
      now,
      limits,
      noDeadline,
    );
    expect(r).toEqual({
      ok: false,
      errors: [{ field: 'deadline_at', message: expect.stringMatching(/deadline_at.*null/) }],
    });
  });

  test('reports every failing field at once', () => {
    const r = parseReschedule(
      { due_at: 'soon', delay_ms: -1, deadline_at: 'x', extra: 1 },
      now,
      limits,
      noDeadline,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors.map((e) => e.field).sort()).toEqual(['deadline_at', 'delay_ms', 'due_at', 'extra']);
    }
    const bounds = parseReschedule(
      { due_at: '2040-01-01T00:00:00Z', deadline_at: '2039-01-01T00:00:00Z' },
      now,
      limits,
      noDeadline,
    );
    expect(bounds.ok).toBe(false);
    if (!bounds.ok) expect(bounds.errors.map((e) => e.field).sort()).toEqual(['deadline_at', 'due_at']);
  });
});
