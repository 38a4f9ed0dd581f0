import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { Cluster } from 'ioredis';
import { crash, down, serviceUrls, stackConfigFromEnv, status, upOptional } from '@kairos/ops';
import { createRedis } from '@kairos/redis';
import { checkPrerequisites } from '../src/prereqs.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Whether nothing listens on the port now. */
function free(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = createServer();
    s.once('error', () => r(false));
    s.listen(port, '127.0.0.1', () => s.close(() => r(true)));
  });
}

/** A base port with its five successors and their bus ports (10 above) free. */
async function freeBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ports = Array.from({ length: 16 }, (_, i) => base + i);
    if ((await Promise.all(ports.map(free))).every(Boolean)) return base;
  }
}

test('up starts the optional Redis Cluster (three masters, a replica each), Kairos connects through its seeds, it survives a crash; down stops it', async () => {
  checkPrerequisites(['redis-cluster'], () => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'kairos-redis-cluster-'));
  const cfg = stackConfigFromEnv(ROOT, {
    KAIROS_STACK_DIR: dir,
    KAIROS_REDIS_CLUSTER_PORT: String(await freeBase()),
    KAIROS_STACK_WITH: 'redis-cluster',
  });
  const url = serviceUrls(cfg).KAIROS_REDIS_CLUSTER_URL ?? '';
  const roundTrip = async () => {
    const redis = createRedis(url);
    try {
      expect(redis).toBeInstanceOf(Cluster);
      // Keys of 12 partitions: slots on every master.
      const keys = Array.from({ length: 12 }, (_, p) => `kairos:{${p}}:probe`);
      await Promise.all(keys.map((k, i) => redis.set(k, String(i))));
      expect(await Promise.all(keys.map((k) => redis.get(k)))).toEqual(keys.map((_, i) => String(i)));
      const cluster = redis as Cluster;
      expect(cluster.nodes('master')).toHaveLength(3);
    } finally {
      redis.disconnect();
    }
  };
  try {
    const [state] = await upOptional(cfg, () => undefined);
    expect(state).toMatchObject({ name: 'redis-cluster', healthy: true, managed: true, action: 'started' });
    expect(url.split(',')).toHaveLength(3);
    await roundTrip();
    // Crashed whole and started again: nodes.conf keeps the topology (the data is gone, as with
    // the single Redis, which has no persistence either).
    await crash(cfg, 'redis-cluster');
    expect((await status(cfg)).find((s) => s.name === 'redis-cluster')).toMatchObject({ healthy: false });
    const [again] = await upOptional(cfg, () => undefined);
    expect(again).toMatchObject({ healthy: true, action: 'started' });
    await roundTrip();
  } finally {
    await down(cfg, () => undefined, ['redis-cluster']);
    rmSync(dir, { recursive: true, force: true });
  }
  expect((await status(cfg)).find((s) => s.name === 'redis-cluster')).toMatchObject({
    healthy: false,
    pid: undefined,
  });
}, 120_000);
