import { expect, test } from 'vitest';
import { RecentEvents } from '../src/recent-events.js';

test('remembers applied event ids up to its size, forgetting the oldest first', () => {
  const recent = new RecentEvents(3);
  for (const id of ['a', 'b', 'c']) recent.add(id);
  expect(['a', 'b', 'c'].map((id) => recent.has(id))).toEqual([true, true, true]);
  recent.add('d');
  expect(recent.has('a')).toBe(false);
  expect(['b', 'c', 'd'].map((id) => recent.has(id))).toEqual([true, true, true]);
  // Adding one it already holds neither grows it nor forgets another.
  recent.add('d');
  expect(['b', 'c', 'd'].map((id) => recent.has(id))).toEqual([true, true, true]);
});
