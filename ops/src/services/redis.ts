import { mkdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { dirs } from '../config.js';
import { spawnDetached } from '../proc.js';
import type { ServiceDef } from './types.js';

export const redis: ServiceDef = {
  name: 'redis',
  dependsOn: [],
  startTimeoutMs: 20_000,
  listens: (cfg) => `redis://${cfg.host}:${cfg.ports.redis}`,
  async healthy(cfg) {
    const client = new Redis({
      host: cfg.host,
      port: cfg.ports.redis,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 1000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  },
  start({ cfg, tools, logFile, pidFile }) {
    const dir = dirs(cfg).redis;
    mkdirSync(dir, { recursive: true });
    return spawnDetached({
      name: 'redis',
      command: tools.redisServer,
      args: [
        '--bind',
        cfg.host,
        '--port',
        String(cfg.ports.redis),
        '--dir',
        dir,
        // Never evict silently: a full Redis refuses writes and Kairos falls back to PostgreSQL.
        '--maxmemory',
        cfg.redisMaxMemory,
        '--maxmemory-policy',
        'noeviction',
        // The hot set is rebuilt from PostgreSQL and Kafka, so no persistence by default.
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      logFile,
      pidFile,
    });
  },
};
