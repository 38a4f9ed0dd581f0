import { Cluster } from 'ioredis';
import type { RedisClient } from './client.js';

/** used_memory ÷ maxmemory of one server's INFO memory; 0 without a maxmemory. */
function ratioOf(info: string): number {
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
  const max = Number(/maxmemory:(\d+)/.exec(info)?.[1] ?? 0);
  return max > 0 ? used / max : 0;
}

/**
 * How full Redis is, as used ÷ maxmemory (0 when it has no limit): of the one server, or on a
 * Redis Cluster of its fullest master (INFO answers for one node only, and a partition's keys may
 * be on any of them, so the callers' decisions stay on the safe side: a partition returns to its
 * hot set only when every master has room).
 */
export async function memoryUse(redis: RedisClient): Promise<number> {
  if (!(redis instanceof Cluster)) return ratioOf(await redis.info('memory'));
  const ratios = await Promise.all(redis.nodes('master').map(async (n) => ratioOf(await n.info('memory'))));
  return Math.max(0, ...ratios);
}
