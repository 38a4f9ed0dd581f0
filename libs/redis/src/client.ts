import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * A connection to Redis: one server, or a Redis Cluster. Every Kairos key carries its partition's
 * hash tag (`{p}`; the rate limits `{kairos-rate}`), so each script and pipeline touches one slot.
 */
export type RedisClient = Redis | Cluster;

/**
 * Scripts called with a variable number of keys: ioredis's cluster auto-pipelining groups a call
 * by its first argument, which for them is the key count, not a key, and would send calls for
 * different nodes in one batch (rejected as a whole). They go out on their own.
 */
const VARIABLE_KEY_SCRIPTS = [
  'kairosApplyEvents',
  'kairosAck',
  'kairosLeaseClaim',
  'kairosLeaseRenew',
  'kairosLeaseRelease',
  'kairosRateTake',
  'kairosRateRefund',
  'kairosRestoreAttempts',
];

/**
 * The one Redis client policy of Kairos: a command fails after 3 reconnect attempts instead of
 * waiting forever on a lost Redis, and commands issued in the same turn of the event loop go out
 * in one write (auto-pipelining). The delay tier applies a Kafka batch's events concurrently; one
 * socket write each cost ~14 % of its CPU (writeUtf8String, W1 profile).
 *
 * `url` names one server, or several comma-separated seed nodes of a Redis Cluster (any of its
 * nodes; the client learns the rest and follows MOVED and ASK redirections).
 */
export function createRedis(url: string, options: RedisOptions = {}): RedisClient {
  const urls = url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length <= 1)
    return new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true, ...options });
  const seeds = urls.map((u) => {
    const parsed = new URL(u);
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
      throw new RangeError(`Redis seed "${u}" is not a redis:// or rediss:// URL`);
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  const first = new URL(urls[0] ?? '');
  // Options of the cluster as a whole; the rest apply to each node's connection.
  const { keyPrefix, lazyConnect, ...redisOptions } = options;
  return new Cluster(seeds, {
    enableAutoPipelining: true,
    autoPipeliningIgnoredCommands: VARIABLE_KEY_SCRIPTS,
    // A multi-key script on a slot being moved gets TRYAGAIN until its keys are on one node; each
    // retry (100 ms apart) counts as a redirection: 64 ride out a slot moved in batches for ~6 s.
    maxRedirections: 64,
    ...(keyPrefix === undefined ? {} : { keyPrefix }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    redisOptions: {
      maxRetriesPerRequest: 3,
      ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
      ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
      ...redisOptions,
    },
  });
}
