import { spawnSync } from 'node:child_process';
import { Cluster, Redis } from 'ioredis';
import { freePort, redisBinary, startRedisServer, type RedisServer } from './redis-server.js';

/**
 * A private Redis Cluster for tests and benchmarks: real redis-server processes in cluster mode,
 * joined by `redis-cli --cluster create` as an operator would, every slot assigned.
 */
export interface RedisCluster {
  /** The nodes, masters first (as created: redis-cli makes the first `masters` nodes masters). */
  readonly nodes: readonly RedisServer[];
  /** Seed URLs, comma-separated: what KAIROS_REDIS_URL takes for a cluster. */
  readonly url: string;
  /** A cluster client (the caller quits it). */
  client(): Cluster;
  /**
   * Moves one slot to another master while the cluster serves, as `redis-cli --cluster reshard`
   * does (IMPORTING/MIGRATING, MIGRATE in batches, SETSLOT NODE on every master), `batch` keys
   * at a time with `pauseMs` between batches so the slot stays half-moved for a while under load.
   * Returns the keys moved.
   */
  moveSlot(slot: number, to: RedisServer, o?: { batch?: number; pauseMs?: number }): Promise<number>;
  /** The master serving `slot` now. */
  ownerOf(slot: number): Promise<RedisServer>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** Default 3 (the fewest redis-cli accepts). */
  readonly masters?: number;
  /** Replicas per master. Default 0. */
  readonly replicas?: number;
  /** Extra redis-server arguments of every node (e.g. `--maxmemory 64mb`). */
  readonly args?: readonly string[];
}

/** Whether every node reports the cluster whole (every slot served, the state ok). */
async function clusterOk(nodes: readonly RedisServer[]): Promise<boolean> {
  for (const n of nodes) {
    const c = new Redis(n.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    c.on('error', () => undefined);
    try {
      await c.connect();
      const info = await c.cluster('INFO');
      if (!/cluster_state:ok/.test(info) || !/cluster_slots_assigned:16384/.test(info)) return false;
    } catch {
      return false;
    } finally {
      c.disconnect();
    }
  }
  return true;
}

/** Starts `masters × (1 + replicas)` cluster-mode nodes and creates the cluster over them. */
export async function startRedisCluster(o: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = o.masters ?? 3;
  const replicas = o.replicas ?? 0;
  const nodes: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      // The bus port defaults to port + 10000, past 65535 for a high ephemeral port: pick one.
      const busPort = await freePort();
      nodes.push(
        await startRedisServer([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(busPort),
          '--cluster-node-timeout',
          '5000',
          ...(o.args ?? []),
        ]),
      );
    }
    const created = spawnSync(
      redisBinary('redis-cli', 'Debian: apt-get install redis-tools'),
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (created.status !== 0)
      throw new Error(
        `redis-cli --cluster create failed (${created.status}):\n${created.stdout}${created.stderr}`,
      );
    const deadline = Date.now() + 30_000;
    while (!(await clusterOk(nodes))) {
      if (Date.now() > deadline) throw new Error('the Redis Cluster did not reach cluster_state:ok in 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const seeds = nodes.slice(0, masters).map((n) => ({ host: '127.0.0.1', port: n.port }));
  const ownerOf = (slot: number) => withNode(nodes[0] as RedisServer, (c) => slotOwner(c, nodes, slot));
  return {
    ownerOf,
    moveSlot: async (slot, to, mo = {}) => {
      const from = await ownerOf(slot);
      if (from === to) return 0;
      return moveSlot(slot, from, to, nodes.slice(0, masters), mo.batch ?? 10, mo.pauseMs ?? 50);
    },
    nodes,
    url: nodes
      .slice(0, masters)
      .map((n) => n.url)
      .join(','),
    client: () => new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 3 } }),
    stop,
  };
}

/** Runs `f` on a plain connection to one node, closed afterwards. */
async function withNode<T>(node: RedisServer, f: (c: Redis) => Promise<T>): Promise<T> {
  const c = node.client();
  try {
    return await f(c);
  } finally {
    c.disconnect();
  }
}

/** The node whose CLUSTER SLOTS range holds `slot`. */
async function slotOwner(c: Redis, nodes: readonly RedisServer[], slot: number): Promise<RedisServer> {
  const ranges = await c.cluster('SLOTS');
  const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
  const owner = nodes.find((n) => n.port === port);
  if (!owner) throw new Error(`no node serves slot ${slot}`);
  return owner;
}

async function moveSlot(
  slot: number,
  from: RedisServer,
  to: RedisServer,
  masters: readonly RedisServer[],
  batch: number,
  pauseMs: number,
): Promise<number> {
  const fromId = await withNode(from, (c) => c.cluster('MYID'));
  const toId = await withNode(to, (c) => c.cluster('MYID'));
  await withNode(to, (c) => c.cluster('SETSLOT', slot, 'IMPORTING', fromId));
  await withNode(from, (c) => c.cluster('SETSLOT', slot, 'MIGRATING', toId));
  let moved = 0;
  await withNode(from, async (c) => {
    for (;;) {
      const keys = await c.cluster('GETKEYSINSLOT', slot, batch);
      if (keys.length === 0) return;
      await c.migrate('127.0.0.1', to.port, '', 0, 5000, 'KEYS', ...keys);
      moved += keys.length;
      // Deliberately slow: the point is a slot half-moved while the cluster serves.
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  });
  // The new owner first, then the old one (its clients get MOVED from then on), then the rest.
  for (const n of [to, from, ...masters.filter((m) => m !== to && m !== from)])
    await withNode(n, (c) => c.cluster('SETSLOT', slot, 'NODE', toId));
  return moved;
}
