import { Redis, type RedisOptions } from 'ioredis';

/**
 * The one Redis client policy of Kairos: a command fails after 3 reconnect attempts instead of
 * waiting forever on a lost Redis, and commands issued in the same turn of the event loop go out
 * in one write (auto-pipelining). The delay tier applies a Kafka batch's events concurrently; one
 * socket write each cost ~14 % of its CPU (writeUtf8String, W1 profile).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true, ...options });
}
