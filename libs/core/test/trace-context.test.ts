import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  formatTraceparent,
  newTraceparent,
  parseTraceparent,
  traceIdOf,
  traceparentOrNew,
  validTraceparent,
} from '@kairos/core';

// The example of the W3C Trace Context specification.
const SPEC = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent parsing', () => {
  test('the specification example parses into its fields', () => {
    expect(parseTraceparent(SPEC)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      flags: '01',
    });
    expect(traceIdOf(SPEC)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  test.each([
    ['absent', undefined],
    ['not a string', 42],
    ['empty', ''],
    ['garbage', 'hello'],
    ['uppercase hex', SPEC.toUpperCase()],
    ['version ff', SPEC.replace(/^00/, 'ff')],
    ['all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['all-zero parent id', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`],
    ['short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['version 00 with extra fields', `${SPEC}-extra`],
    ['missing flags', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7'],
    ['too long', `cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-${'x'.repeat(600)}`],
  ])('%s is treated as absent', (_, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
    expect(validTraceparent(header)).toBeNull();
  });

  test('a later version is read for its first four fields and sent on as version 00', () => {
    expect(validTraceparent(`cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever`)).toBe(SPEC);
    expect(validTraceparent(` ${SPEC} `)).toBe(SPEC);
  });

  test('any string: never throws, and what parses formats back to itself', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const t = parseTraceparent(s);
        if (t) expect(parseTraceparent(formatTraceparent(t))).toEqual(t);
      }),
    );
  });
});

describe('traceparent generation', () => {
  test('a new trace is a valid, sampled version-00 header with fresh ids', () => {
    const a = newTraceparent();
    const b = newTraceparent();
    expect(parseTraceparent(a)?.flags).toBe('01');
    expect(a).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(traceIdOf(a)).not.toBe(traceIdOf(b));
  });

  test('random bytes that come out all zero are drawn again', () => {
    let calls = 0;
    const fill = (bytes: Uint8Array) => {
      calls++;
      bytes.fill(calls <= 1 ? 0 : 0xab);
    };
    expect(newTraceparent(fill)).toBe(`00-${'ab'.repeat(16)}-${'ab'.repeat(8)}-01`);
  });

  test('a job keeps a valid header given to it and gets a new trace otherwise', () => {
    expect(traceparentOrNew(SPEC)).toBe(SPEC);
    expect(traceparentOrNew('not-a-traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(traceparentOrNew(null)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
