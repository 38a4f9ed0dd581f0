import type { PerJobCosts } from './costs.js';

/**
 * What one unit of each kind carries. None of these is measured here (one 2-core machine cannot):
 * they are the planning figures the model multiplies the measured per-job costs by, stated so
 * a reader can replace them with their own hardware's.
 */
export interface UnitCapacities {
  /** Share of a core (or of a limit) a component may use at the sized load: room for herds and failover. Default 0.6. */
  readonly utilisation: number;
  /** Cores of one PostgreSQL primary. Default 32. */
  readonly pgCoresPerPrimary: number;
  /** WAL one primary sustains (written, replicated, archived), MB/s. Default 200. */
  readonly pgWalMBps: number;
  /** Log bytes one broker takes in (leader and follower copies), MB/s. Default 100. */
  readonly brokerWriteMBps: number;
  /** Copies of every Kafka partition. Default 3. */
  readonly replication: number;
  /** Memory of one Redis shard for hot sets, GB. Default 25. */
  readonly redisShardGB: number;
  /** How long before its due time a job typically exists (what the hot sets hold), s. Default 600. */
  readonly leadSeconds: number;
  /** Job-events partitions per delay-tier process: room to add processes without repartitioning. Default 4. */
  readonly partitionsPerTier: number;
}

export const DEFAULT_CAPACITIES: UnitCapacities = {
  utilisation: 0.6,
  pgCoresPerPrimary: 32,
  pgWalMBps: 200,
  brokerWriteMBps: 100,
  replication: 3,
  redisShardGB: 25,
  leadSeconds: 600,
  partitionsPerTier: 4,
};

/** Components whose work happens when a job is created; the rest when it falls due and runs. */
const CREATE_SIDE = new Set(['api', 'ingest', 'connect', 'registry']);
/**
 * Of the shared services' per-job work, the share at creation: the job row and its outbox row
 * (insert, delete) are 3 of the ~7 row writes; the JobScheduled event is 1 of the job's ~5
 * events and task messages; a hot-set insert is about half of the job's Redis work (the pop,
 * claim and ack the other half).
 */
const CREATE_SHARE: Readonly<Record<string, number>> = { postgres: 3 / 7, kafka: 1 / 5, redis: 1 / 2 };

/** A load: jobs created per second and jobs falling due (dispatched and run) per second. */
export interface Load {
  readonly created: number;
  readonly due: number;
  /** Jobs waiting in the hot sets (created, due within the lookahead). Default: created × leadSeconds. */
  readonly hotJobs?: number;
}

/** Cores of each component at a load (at the utilisation target), and the data rates. */
export interface ComponentLoad {
  readonly cores: Readonly<Record<string, number>>;
  readonly walMBps: number;
  readonly rowWritesPerS: number;
  readonly kafkaMBps: number;
  readonly redisCommandsPerS: number;
  readonly redisGB: number;
}

function createShare(component: string): number {
  return CREATE_SHARE[component] ?? (CREATE_SIDE.has(component) ? 1 : 0);
}

export function componentLoad(
  load: Load,
  costs: PerJobCosts,
  caps: UnitCapacities = DEFAULT_CAPACITIES,
): ComponentLoad {
  const cores: Record<string, number> = {};
  const rate = (component: string) =>
    load.created * createShare(component) + load.due * (1 - createShare(component));
  for (const [component, ms] of Object.entries(costs.cpuMs))
    cores[component] = (rate(component) * ms) / 1000 / caps.utilisation;
  const pg = rate('postgres');
  const kafka = rate('kafka');
  const hot = load.hotJobs ?? load.created * caps.leadSeconds;
  return {
    cores,
    walMBps: (pg * costs.walBytes) / 1e6,
    rowWritesPerS: pg * costs.rowWrites,
    kafkaMBps: (kafka * costs.kafkaBytes) / 1e6,
    redisCommandsPerS: rate('redis') * costs.redisCommands,
    redisGB: (hot * costs.redisBytesPerHotJob) / 1e9,
  };
}

/** A deployment's size for a load. */
export interface Sizing {
  readonly delayTierProcesses: number;
  readonly partitions: number;
  readonly redisShards: number;
  readonly brokers: number;
  readonly pgPrimaries: number;
  readonly pgCores: number;
  readonly debeziumConnectors: number;
  readonly workerSdkCores: number;
  readonly apiProcesses: number;
  readonly trackerProcesses: number;
  readonly load: ComponentLoad;
}

const up = (x: number, min = 1) => Math.max(min, Math.ceil(x - 1e-9));
const pow2 = (x: number) => 2 ** Math.ceil(Math.log2(Math.max(1, x)));

export function size(load: Load, costs: PerJobCosts, caps: UnitCapacities = DEFAULT_CAPACITIES): Sizing {
  const l = componentLoad(load, costs, caps);
  const cores = (c: string) => l.cores[c] ?? 0;
  const tiers = up(cores('delay-tier'));
  const pgCores = cores('postgres');
  return {
    delayTierProcesses: tiers,
    partitions: Math.max(8, pow2(tiers * caps.partitionsPerTier)),
    // A shard is one Redis process (one core for commands) with its memory.
    redisShards: up(Math.max(cores('redis'), l.redisGB / caps.redisShardGB), 3),
    brokers: up(
      (l.kafkaMBps * caps.replication) / (caps.brokerWriteMBps * caps.utilisation),
      caps.replication,
    ),
    pgPrimaries: up(
      Math.max(pgCores / caps.pgCoresPerPrimary, l.walMBps / (caps.pgWalMBps * caps.utilisation)),
    ),
    pgCores: Math.ceil(pgCores),
    // One connector is one task: one thread reads the slot and converts each change.
    debeziumConnectors: up(cores('connect')),
    workerSdkCores: Math.ceil(cores('worker')),
    apiProcesses: up(cores('api')),
    trackerProcesses: up(cores('tracker')),
    load: l,
  };
}

/** The steady rate (created = due) at which one unit of each component that does not scale out today is full. */
export function ceilings(
  costs: PerJobCosts,
  caps: UnitCapacities = DEFAULT_CAPACITIES,
): Record<string, number> {
  const perCore = (c: string) => (1000 * caps.utilisation) / (costs.cpuMs[c] ?? Infinity);
  return {
    'one PostgreSQL primary (CPU)':
      (caps.pgCoresPerPrimary * 1000 * caps.utilisation) / (costs.cpuMs.postgres ?? Infinity),
    'one PostgreSQL primary (WAL)': (caps.pgWalMBps * caps.utilisation * 1e6) / costs.walBytes,
    'one Debezium connector (one task)': perCore('connect'),
    'one delay-tier process': perCore('delay-tier'),
    'one Redis shard (CPU)': perCore('redis'),
    'one tracker process': perCore('tracker'),
    'one API process': perCore('api'),
  };
}
