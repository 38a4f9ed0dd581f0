import { describe, expect, test } from 'vitest';
import { checkReservedSlots, parseReservedSlots, SlotAccounts } from '../src/slots.js';

describe('slot accounts', () => {
  test('a class takes its reserved slots first, then shared ones; others only shared ones', () => {
    const s = new SlotAccounts(4, { critical: 2 });
    expect(s.take('critical')).toBe('reserved');
    expect(s.take('default')).toBe('shared');
    expect(s.take('critical')).toBe('reserved');
    expect(s.reservedFree('critical')).toBe(false);
    expect(s.take('critical')).toBe('shared'); // its own are full: a shared one
    expect(s.take('default')).toBeUndefined(); // the last free slots are critical's: none here
    expect(s.of('critical')).toEqual({ reserved: 2, shared: 1 });
    expect(s.inUse).toBe(4);
    s.release('critical', 'reserved');
    expect(s.take('default')).toBeUndefined(); // a reserved slot freed: still not default's
    expect(s.take('critical')).toBe('reserved');
    s.release('default', 'shared');
    expect(s.take('default')).toBe('shared');
  });

  test('without reservations every slot is shared; releasing what is not held is a bug', () => {
    const s = new SlotAccounts(2);
    expect([s.take('a'), s.take('b'), s.take('a')]).toEqual(['shared', 'shared', undefined]);
    expect(() => s.release('a', 'reserved')).toThrow(/no reserved slot of a/);
  });

  test('validation: classes served, non-negative integers, a shared slot left', () => {
    const classes = ['critical', 'default'];
    expect(checkReservedSlots(undefined, classes, 10)).toEqual({});
    expect(checkReservedSlots({ critical: 6, default: 0 }, classes, 10)).toEqual({ critical: 6, default: 0 });
    expect(checkReservedSlots({ critical: 6, default: 3 }, classes, 10)).toEqual({ critical: 6, default: 3 });
    const bad: [unknown, RegExp][] = [
      [{ batch: 2 }, /reservedSlots names resource class "batch", which this worker does not serve/],
      [{ critical: -1 }, /reservedSlots.critical must be a non-negative integer, got -1/],
      [{ critical: 1.5 }, /reservedSlots.critical must be a non-negative integer/],
      [{ critical: '6' }, /reservedSlots.critical must be a non-negative integer/],
      [
        { critical: 10 },
        /reservedSlots must total less than concurrency \(10\) so a slot stays shared, got 10/,
      ],
      [{ critical: 6, default: 5 }, /total less than concurrency/],
      [[6], /reservedSlots must be an object/],
      ['critical:6', /reservedSlots must be an object/],
    ];
    for (const [value, message] of bad) {
      expect(() => checkReservedSlots(value, classes, 10)).toThrow(RangeError);
      expect(() => checkReservedSlots(value, classes, 10)).toThrow(message);
    }
  });

  test('the class:count form', () => {
    expect(parseReservedSlots('critical:6')).toEqual({ critical: 6 });
    expect(parseReservedSlots(' critical: 6 , io:2 ')).toEqual({ critical: 6, io: 2 });
    expect(parseReservedSlots('')).toEqual({});
    expect(() => parseReservedSlots('critical=6', 'KAIROS_WORKER_RESERVED_SLOTS')).toThrow(
      'KAIROS_WORKER_RESERVED_SLOTS: "critical=6" is not class:count (e.g. critical:6)',
    );
    expect(() => parseReservedSlots('critical:-1')).toThrow(/not class:count/);
    expect(() => parseReservedSlots('critical:1.5')).toThrow(/not class:count/);
    expect(() => parseReservedSlots('critical:1,critical:2')).toThrow(/"critical" appears twice/);
  });
});
