import { expect, test } from 'vitest';
import { MAX_PAYLOAD_DEPTH, unstorableJson, unstorableText } from '../src/index.js';

const nested = (n: number): unknown => (n === 0 ? 1 : [nested(n - 1)]);

test('NUL and lone surrogates cannot be stored; paired surrogates and the rest of Unicode can', () => {
  for (const ok of ['', 'plain', 'é', '💥', '\ufffe', '\u202e'])
    expect(unstorableText(ok), ok).toBeUndefined();
  expect(unstorableText('a\u0000b')).toMatch(/NUL/);
  expect(unstorableText('\ud800')).toMatch(/surrogate/);
  expect(unstorableText('x\udc00')).toMatch(/surrogate/);
  expect(unstorableText('\ud83d\udca5')).toBeUndefined();
});

test('a payload is refused for its first bad string or key, or for nesting deeper than the limit', () => {
  expect(unstorableJson({ a: [1, { b: 'ok' }] }, 'payload')).toBeUndefined();
  expect(unstorableJson({ a: [1, { b: 'x\u0000' }] }, 'payload')).toMatchObject({ path: 'payload.a.1.b' });
  expect(unstorableJson({ ['k\ud800']: 1 }, 'payload')?.message).toMatch(/^key /);
  expect(unstorableJson(nested(MAX_PAYLOAD_DEPTH - 1), 'p')).toBeUndefined();
  expect(unstorableJson(nested(MAX_PAYLOAD_DEPTH + 1), 'p')?.message).toMatch(/nested deeper/);
  // A million levels: refused without a stack overflow.
  let deep: unknown = 1;
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  expect(unstorableJson(deep, 'p')).toBeDefined();
});
