import { expect, test } from 'vitest';
import { chunkBySize, messageBytes } from '../src/sized-sends.js';

const msg = (key: string, bytes: number) => ({ key, value: Buffer.alloc(bytes), headers: { h: 'x' } });

test("a message's estimate covers its key, value and headers", () => {
  expect(messageBytes(msg('k', 100))).toBeGreaterThanOrEqual(1 + 100 + 2);
  expect(messageBytes({ key: null, value: 'héllo' })).toBeGreaterThanOrEqual(6);
});

test('a send is split into chunks under the limit, in order, a message over it alone', () => {
  const a = Array.from({ length: 10 }, (_, i) => msg(`a${i}`, 300));
  const b = [msg('b0', 5000), msg('b1', 300)];
  const chunks = chunkBySize(
    [
      { topic: 'a', messages: a },
      { topic: 'b', messages: b },
    ],
    1200,
  );
  for (const c of chunks.filter((c) => c.flatMap((t) => t.messages).length > 1))
    expect(c.flatMap((t) => t.messages).reduce((n, m) => n + messageBytes(m), 0)).toBeLessThanOrEqual(1200);
  expect(chunks.flatMap((c) => c.flatMap((t) => t.messages.map((m) => m.key)))).toEqual([
    ...a.map((m) => m.key),
    ...b.map((m) => m.key),
  ]);
  expect(
    chunks.some((c) => c.length === 1 && c[0]?.messages.length === 1 && c[0].messages[0]?.key === 'b0'),
  ).toBe(true);
});

test('a small send stays one chunk', () => {
  expect(chunkBySize([{ topic: 't', messages: [msg('a', 10), msg('b', 10)] }], 1000)).toHaveLength(1);
});
