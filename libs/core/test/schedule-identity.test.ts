import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  applyJitter,
  fireTimesBetween,
  jitteredFireAt,
  jitterOffsetMs,
  OCCURRENCE_NAMESPACE,
  occurrenceId,
  uuidV5,
} from '@kairos/core';

/** RFC 9562 §5.5 with node's SHA-1, as the reference for our pure implementation. */
function referenceV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('occurrence identity', () => {
  test('uuidV5 matches the RFC 9562 example and node’s SHA-1 for any name', () => {
    // RFC 9562 appendix A.4: the DNS namespace and www.example.com.
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (name) => {
        expect(uuidV5(OCCURRENCE_NAMESPACE, name)).toBe(referenceV5(OCCURRENCE_NAMESPACE, name));
      }),
      { numRuns: 300 },
    );
  });

  test('the same occurrence always gets the same id; any difference gives another', () => {
    const id = occurrenceId('sched-1', '2026-03-08T02:30:00[America/New_York]', 0);
    expect(id).toMatch(V5);
    expect(occurrenceId('sched-1', '2026-03-08T02:30:00[America/New_York]', 0)).toBe(id);
    expect(occurrenceId('sched-1', '2026-03-08T02:30:00[America/New_York]')).toBe(id);
    expect(
      new Set([
        id,
        occurrenceId('sched-2', '2026-03-08T02:30:00[America/New_York]', 0),
        occurrenceId('sched-1', '2026-03-08T02:30:01[America/New_York]', 0),
        occurrenceId('sched-1', '2026-03-08T02:30:00[America/Chicago]', 0),
        occurrenceId('sched-1', '2026-03-08T02:30:00[America/New_York]', 1),
      ]).size,
    ).toBe(5);
    expect(() => occurrenceId('', 'x')).toThrow(RangeError);
  });

  test('a year of a schedule regenerated gives the same ids, all distinct, two per doubled wall time', () => {
    const timing = { cron: '30 1 * * *', timeZone: 'America/New_York', dst: { overlap: 'both' as const } };
    const gen = () =>
      fireTimesBetween(timing, Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), 1000).map((o) =>
        occurrenceId('s', o.nominal, o.instantIndex),
      );
    const ids = gen();
    expect(ids).toHaveLength(366); // 365 days, 1 November twice
    expect(new Set(ids).size).toBe(366);
    expect(gen()).toEqual(ids);
  });
});

describe('deterministic jitter', () => {
  test('stable, within ±allowance, 0 without one', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.integer({ min: 0, max: 3_600_000 }),
        (tenant, id, allowance) => {
          const j = jitterOffsetMs(tenant, id, allowance);
          expect(Number.isInteger(j)).toBe(true);
          expect(Math.abs(j)).toBeLessThanOrEqual(allowance);
          expect(jitterOffsetMs(tenant, id, allowance)).toBe(j);
        },
      ),
    );
    expect(jitterOffsetMs('acme', 's1', 0)).toBe(0);
    expect(() => jitterOffsetMs('acme', 's1', -1)).toThrow(RangeError);
    expect(() => jitterOffsetMs('acme', 's1', 1.5)).toThrow(RangeError);
  });

  test('spreads schedules over the whole allowance, on both sides', () => {
    const offsets = Array.from({ length: 2000 }, (_, i) => jitterOffsetMs('acme', `schedule-${i}`, 1000));
    const mean = offsets.reduce((a, b) => a + b, 0) / offsets.length;
    expect(Math.abs(mean)).toBeLessThan(50);
    expect(Math.min(...offsets)).toBeLessThan(-950);
    expect(Math.max(...offsets)).toBeGreaterThan(950);
    // Another tenant with the same schedule id gets its own offset.
    expect(
      offsets.filter((o, i) => o === jitterOffsetMs('other', `schedule-${i}`, 1000)).length,
    ).toBeLessThan(20);
  });

  test('never before the previous occurrence’s fire time', () => {
    expect(jitteredFireAt(10_000, -3000, null)).toBe(7000);
    expect(jitteredFireAt(10_000, -3000, 8000)).toBe(8000);
    expect(jitteredFireAt(10_000, 3000, 8000)).toBe(13_000);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 50 }),
        fc.integer({ min: -5000, max: 5000 }),
        fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
        (steps, offset, previous) => {
          let t = 500_000;
          const os = steps.map((s) => ({
            nominal: `n${(t += s)}`,
            instant: t,
            local: '',
            kind: 'regular' as const,
            instantIndex: 0 as const,
          }));
          const jittered = applyJitter(os, offset, previous);
          let prev = previous ?? -Infinity;
          for (const [i, j] of jittered.entries()) {
            expect(j.fireAt).toBeGreaterThanOrEqual(prev);
            expect(j.fireAt).toBe(Math.max(os[i]!.instant + offset, prev));
            prev = j.fireAt;
          }
        },
      ),
    );
  });
});
