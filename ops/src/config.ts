import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { SASL_USER } from './services/kafka-security.js';

/** Everything the local stack needs to know, compiled once from the environment at the CLI entry. */
export interface StackConfig {
  readonly root: string;
  /** All data and logs; `reset` deletes it. Default: <root>/.kairos */
  readonly dataDir: string;
  /** Maven-resolved jars; survives `reset`. Default: <root>/.cache/jars */
  readonly jarCache: string;
  readonly host: string;
  readonly ports: {
    readonly postgres: number;
    readonly redis: number;
    readonly kafka: number;
    readonly kafkaController: number;
    /** The SASL_SSL listener (TLS with the stack's own CA; SCRAM and PLAIN users). */
    readonly kafkaSecure: number;
    readonly connect: number;
    readonly registry: number;
    /** The registry's management interface (Quarkus health and metrics). */
    readonly registryManagement: number;
    /** Prometheus, when the stack runs it (`--with prometheus`). */
    readonly prometheus: number;
    /**
     * The first node of the Redis Cluster (`--with redis-cluster`): six nodes on this port and the
     * five after it (three masters, a replica each), their cluster bus ports 10 above.
     */
    readonly redisCluster: number;
    /**
     * The first broker of the three-broker Kafka (`--with kafka-cluster`): brokers on this port and
     * the two after it, their KRaft controllers 10 above each.
     */
    readonly kafkaCluster: number;
  };
  /** Optional services `up` starts besides the default ones (`--with`, KAIROS_STACK_WITH). Default: none. */
  readonly optional: readonly OptionalServiceName[];
  /**
   * Where the apps serve /metrics, as they read it (KAIROS_API_METRICS_PORT,
   * KAIROS_DELAY_TIER_ADMIN_PORT, KAIROS_TRACKER_METRICS_PORT, KAIROS_INGEST_METRICS_PORT), plus
   * KAIROS_PROMETHEUS_EXTRA_TARGETS (`host:port,…`: your worker services): what Prometheus scrapes
   * (a port of 0 is left out).
   */
  readonly scrape: {
    readonly api: number;
    readonly delayTier: number;
    readonly tracker: number;
    readonly ingest: number;
    readonly extraTargets: readonly string[];
  };
  /** JVM max heaps; the three add up to ~1.9 GiB by default (the budget is 2.5 GiB). */
  readonly heaps: { readonly kafka: string; readonly connect: string; readonly registry: string };
  readonly redisMaxMemory: string;
  /** Partitions of kairos.job-events (fixed for the life of a deployment: shard = murmur2 mod P). */
  readonly jobEventPartitions: number;
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > 65535) {
    throw new RangeError(`${name}=${raw} is not a TCP port (${min}-65535)`);
  }
  return n;
}

/** Services the stack runs only when asked (`up --with prometheus`): the default stack stays small. */
export const OPTIONAL_SERVICE_NAMES = ['prometheus', 'redis-cluster', 'kafka-cluster'] as const;
export type OptionalServiceName = (typeof OPTIONAL_SERVICE_NAMES)[number];

/** `prometheus` or `a,b` (from --with or KAIROS_STACK_WITH): each must be an optional service. */
export function optionalServices(raw: string, from: string): OptionalServiceName[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!(OPTIONAL_SERVICE_NAMES as readonly string[]).includes(n)) {
      throw new RangeError(
        `${from}: unknown optional service "${n}"; one of: ${OPTIONAL_SERVICE_NAMES.join(', ')}`,
      );
    }
  }
  return [...new Set(names)] as OptionalServiceName[];
}

function targets(env: NodeJS.ProcessEnv, name: string): string[] {
  const list = (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const t of list) {
    if (!/^[\w.-]+:\d{1,5}$/.test(t)) throw new RangeError(`${name}: "${t}" is not host:port`);
  }
  return list;
}

function heap(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name] ?? fallback;
  if (!/^\d+[mg]$/i.test(raw)) throw new RangeError(`${name}=${raw} must look like 512m or 1g`);
  return raw;
}

export function stackConfigFromEnv(root: string, env: NodeJS.ProcessEnv = process.env): StackConfig {
  const partitions = Number(env.KAIROS_JOB_EVENT_PARTITIONS ?? '8');
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 256) {
    throw new RangeError(`KAIROS_JOB_EVENT_PARTITIONS=${env.KAIROS_JOB_EVENT_PARTITIONS} must be 1-256`);
  }
  return {
    root,
    dataDir: resolve(root, env.KAIROS_STACK_DIR ?? '.kairos'),
    jarCache: resolve(root, env.KAIROS_JAR_CACHE ?? '.cache/jars'),
    host: '127.0.0.1',
    ports: {
      postgres: port(env, 'KAIROS_PG_PORT', 55432),
      redis: port(env, 'KAIROS_REDIS_PORT', 56379),
      kafka: port(env, 'KAIROS_KAFKA_PORT', 59092),
      kafkaController: port(env, 'KAIROS_KAFKA_CONTROLLER_PORT', 59093),
      kafkaSecure: port(env, 'KAIROS_KAFKA_SECURE_PORT', 59094),
      connect: port(env, 'KAIROS_CONNECT_PORT', 58083),
      registry: port(env, 'KAIROS_REGISTRY_PORT', 58081),
      registryManagement: port(env, 'KAIROS_REGISTRY_MANAGEMENT_PORT', 58082),
      prometheus: port(env, 'KAIROS_PROMETHEUS_PORT', 59090),
      redisCluster: port(env, 'KAIROS_REDIS_CLUSTER_PORT', 57001),
      kafkaCluster: port(env, 'KAIROS_KAFKA_CLUSTER_PORT', 59191),
    },
    optional: optionalServices(env.KAIROS_STACK_WITH ?? '', 'KAIROS_STACK_WITH'),
    scrape: {
      // 0 (the app picks a free port) leaves that app out of the scrape: its port is unknown here.
      api: port(env, 'KAIROS_API_METRICS_PORT', 58094, 0),
      delayTier: port(env, 'KAIROS_DELAY_TIER_ADMIN_PORT', 58091, 0),
      tracker: port(env, 'KAIROS_TRACKER_METRICS_PORT', 58092, 0),
      ingest: port(env, 'KAIROS_INGEST_METRICS_PORT', 58093, 0),
      extraTargets: targets(env, 'KAIROS_PROMETHEUS_EXTRA_TARGETS'),
    },
    heaps: {
      kafka: heap(env, 'KAIROS_KAFKA_HEAP', '768m'),
      connect: heap(env, 'KAIROS_CONNECT_HEAP', '640m'),
      registry: heap(env, 'KAIROS_REGISTRY_HEAP', '512m'),
    },
    redisMaxMemory: env.KAIROS_REDIS_MAXMEMORY ?? '1gb',
    jobEventPartitions: partitions,
  };
}

/** The URLs clients use; the same names the test setup and the apps read (KAIROS_*). */
export function serviceUrls(cfg: StackConfig): Record<string, string> {
  const h = cfg.host;
  const security = dirs(cfg).ca;
  return {
    KAIROS_PG_URL: `postgres://kairos@${h}:${cfg.ports.postgres}/kairos`,
    // The same PostgreSQL over TLS, its certificate checked against the stack's CA.
    KAIROS_PG_TLS_URL: `postgres://kairos@${h}:${cfg.ports.postgres}/kairos?sslmode=verify-full&sslrootcert=${resolve(security, 'ca.pem')}`,
    KAIROS_REDIS_URL: `redis://${h}:${cfg.ports.redis}`,
    KAIROS_KAFKA_BROKERS: `${h}:${cfg.ports.kafka}`,
    KAIROS_CONNECT_URL: `http://${h}:${cfg.ports.connect}`,
    KAIROS_REGISTRY_URL: `http://${h}:${cfg.ports.registry}/apis/ccompat/v7`,
    // The SASL_SSL listener, for clients and tests that try secured connections.
    KAIROS_KAFKA_SECURE_BROKERS: `${h}:${cfg.ports.kafkaSecure}`,
    KAIROS_KAFKA_SECURE_CA_FILE: resolve(security, 'ca.pem'),
    KAIROS_KAFKA_SECURE_USERNAME: SASL_USER,
    KAIROS_KAFKA_SECURE_PASSWORD_FILE: resolve(security, 'kairos.password'),
    // The Redis Cluster's masters as seed nodes, when the stack runs one: KAIROS_REDIS_URL takes it.
    ...(cfg.optional.includes('redis-cluster') ? { KAIROS_REDIS_CLUSTER_URL: redisClusterUrl(cfg) } : {}),
    // The three-broker Kafka's bootstrap list, when the stack runs one: KAIROS_KAFKA_BROKERS takes it.
    ...(cfg.optional.includes('kafka-cluster')
      ? { KAIROS_KAFKA_CLUSTER_BROKERS: kafkaClusterBrokers(cfg) }
      : {}),
  };
}

/** The Redis Cluster's nodes (masters first), and the seed list of its masters. */
export const redisClusterPorts = (cfg: StackConfig) =>
  Array.from({ length: 6 }, (_, i) => cfg.ports.redisCluster + i);
export const redisClusterUrl = (cfg: StackConfig) =>
  redisClusterPorts(cfg)
    .slice(0, 3)
    .map((p) => `redis://${cfg.host}:${p}`)
    .join(',');

/** The three-broker Kafka's nodes: node ids 1-3, their broker and KRaft controller ports. */
export const kafkaClusterNodes = (cfg: StackConfig) =>
  [1, 2, 3].map((id) => ({
    id,
    port: cfg.ports.kafkaCluster + id - 1,
    controllerPort: cfg.ports.kafkaCluster + id + 9,
  }));
export const kafkaClusterBrokers = (cfg: StackConfig) =>
  kafkaClusterNodes(cfg)
    .map((n) => `${cfg.host}:${n.port}`)
    .join(',');

/** True if every folder from / down to dir lets other users through (the o+x bit). */
function traversableByOthers(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      // not created yet: its parent decides
    }
    if (dirname(d) === d) return true;
  }
}

/**
 * PostgreSQL runs as the unprivileged `postgres` user when we are root; it must reach its data
 * folder. If the project lives under a folder others cannot enter (a 0700 checkout), its cluster
 * goes to a per-project folder in the system temp dir instead.
 */
export function postgresBase(cfg: StackConfig): string {
  if (process.getuid?.() !== 0 || traversableByOthers(cfg.dataDir)) return resolve(cfg.dataDir, 'pg');
  const id = createHash('sha256').update(cfg.dataDir).digest('hex').slice(0, 12);
  return resolve(tmpdir(), `kairos-pg-${id}`);
}

export const dirs = (cfg: StackConfig) => ({
  logs: resolve(cfg.dataDir, 'logs'),
  run: resolve(cfg.dataDir, 'run'),
  postgres: resolve(postgresBase(cfg), 'data'),
  postgresSockets: resolve(postgresBase(cfg), 'socket'),
  redis: resolve(cfg.dataDir, 'redis'),
  kafka: resolve(cfg.dataDir, 'kafka'),
  connect: resolve(cfg.dataDir, 'connect'),
  registry: resolve(cfg.dataDir, 'registry'),
  prometheus: resolve(cfg.dataDir, 'prometheus'),
  redisCluster: resolve(cfg.dataDir, 'redis-cluster'),
  kafkaCluster: resolve(cfg.dataDir, 'kafka-cluster'),
  // The stack's CA: where the first TLS listener (Kafka's) put it, so existing stacks keep it.
  ca: resolve(cfg.dataDir, 'kafka', 'security'),
});
