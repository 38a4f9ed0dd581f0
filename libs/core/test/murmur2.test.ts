import { describe, expect, test } from 'vitest';
import { murmur2, shardOf } from '@kairos/core';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('murmur2 (Kafka Java client compatible)', () => {
  // Vectors from Kafka's own UtilsTest.testMurmur2.
  test.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ])('murmur2(%j) = %i', (input, expected) => {
    expect(murmur2(utf8(input))).toBe(expected);
  });

  test('shard is toPositive(murmur2) mod partitions, always in range', () => {
    expect(shardOf('foobar', 8)).toBe((-790332482 & 0x7fffffff) % 8);
    for (let i = 0; i < 1000; i++) {
      const s = shardOf(`job-${i}`, 12);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(12);
    }
    expect(() => shardOf('x', 0)).toThrow(RangeError);
  });
});
