import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { dirs, redisClusterPorts, redisClusterUrl, type StackConfig } from '../config.js';
import { spawnDetached } from '../proc.js';
import type { ServiceDef } from './types.js';

/** Each node's cap; the six together stay under the single Redis's default 1 GB. */
const NODE_MAXMEMORY = '160mb';

/** A node's CLUSTER INFO, or undefined when it does not answer. */
async function clusterInfo(host: string, port: number): Promise<string | undefined> {
  const c = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return await c.cluster('INFO');
  } catch {
    return undefined;
  } finally {
    c.disconnect();
  }
}

/**
 * The script the service runs: every node in the background (one process group, so `down` and
 * `crash` reach them all), the cluster created once every node answers unless its slots are
 * already assigned (nodes.conf keeps the topology across restarts), then it waits on the nodes.
 */
function runScript(cfg: StackConfig, redisServer: string, redisCli: string): string {
  const base = dirs(cfg).redisCluster;
  const ports = redisClusterPorts(cfg);
  const node = (p: number) =>
    [
      `mkdir -p ${base}/${p} && ${redisServer} --bind ${cfg.host} --port ${p}`,
      `--cluster-enabled yes --cluster-port ${p + 10} --cluster-config-file ${base}/${p}/nodes.conf`,
      `--cluster-node-timeout 5000 --dir ${base}/${p} --maxmemory ${NODE_MAXMEMORY}`,
      `--maxmemory-policy noeviction --save '' --appendonly no --daemonize no &`,
    ].join(' ');
  return [
    '#!/bin/sh',
    '# Written by `npm run stack -- up --with redis-cluster` at every start.',
    ...ports.map(node),
    // A health-checked wait: each node answers PING before the cluster is created.
    ...ports.map((p) => `until ${redisCli} -h ${cfg.host} -p ${p} ping >/dev/null 2>&1; do sleep 0.1; done`),
    `if ${redisCli} -h ${cfg.host} -p ${ports[0]} cluster info | grep -q 'cluster_slots_assigned:0'; then`,
    `  ${redisCli} --cluster create ${ports.map((p) => `${cfg.host}:${p}`).join(' ')} --cluster-replicas 1 --cluster-yes`,
    'fi',
    'wait',
    '',
  ].join('\n');
}

/**
 * A Redis Cluster (optional: `up --with redis-cluster`): three masters and a replica each, made
 * by `redis-cli --cluster create` as an operator would, no persistence and `noeviction` like the
 * single Redis. Kairos uses it when KAIROS_REDIS_URL lists its masters (KAIROS_REDIS_CLUSTER_URL
 * of `npm run stack -- env`).
 */
export const redisCluster: ServiceDef = {
  name: 'redis-cluster',
  dependsOn: [],
  startTimeoutMs: 60_000,
  listens: redisClusterUrl,
  async healthy(cfg) {
    const infos = await Promise.all(redisClusterPorts(cfg).map((p) => clusterInfo(cfg.host, p)));
    return infos.every(
      (i) => i !== undefined && /cluster_state:ok/.test(i) && /cluster_slots_assigned:16384/.test(i),
    );
  },
  start({ cfg, tools, logFile, pidFile }) {
    const dir = dirs(cfg).redisCluster;
    mkdirSync(dir, { recursive: true });
    const script = resolve(dir, 'run.sh');
    writeFileSync(script, runScript(cfg, tools.redisServer, tools.redisCli), { mode: 0o755 });
    return spawnDetached({
      name: 'redis-cluster',
      command: '/bin/sh',
      args: [script],
      cwd: dir,
      logFile,
      pidFile,
    });
  },
};
