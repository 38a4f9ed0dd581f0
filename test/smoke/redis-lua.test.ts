import { expect, test } from 'vitest';
import { withScripts } from '@kairos/redis';
import { useNamespace } from '../support/namespace.js';

test('a Lua script reads the Redis server clock with redis.call(TIME)', async () => {
  const ns = await useNamespace('redis-lua');
  const redis = withScripts(ns.redis());
  const [seconds, micros] = await redis.time();
  const fromScript = await redis.serverTime();
  const fromTimeCommand = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  // Same clock: the script's reading is at or after the TIME command issued just before it.
  expect(fromScript).toBeGreaterThanOrEqual(fromTimeCommand);
  expect(fromScript - fromTimeCommand).toBeLessThan(60_000);
  // Redis runs with the eviction policy the design requires.
  const policy = await redis.config('GET', 'maxmemory-policy');
  expect(policy[1]).toBe('noeviction');
  await redis.quit();
});
