import type { RunningApp } from '@kairos/ops';
import type { Namespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';
import { CHAOS_SERVICES, owners, ownedCount, type ChaosDeployment } from './chaos-deployment.js';
import { seededRandom } from '@kairos/ops';
import { STACK_FAULTS } from './stack-faults.js';

/** What a fault hands the checker beyond its time. */
export interface FaultOutcome {
  /** A delay-tier owner died: its partitions and the time of death (failover is measured). */
  readonly orphaned?: { readonly partitions: ReadonlySet<number>; readonly atMs: number };
}

export interface FaultContext extends ChaosDeployment {
  readonly ns: Namespace;
  readonly seed: number;
}

/**
 * One fault: `inject` breaks something for real and returns once the deployment is whole again
 * (the process restarted, the standby in charge), waiting on conditions, never on sleeps.
 * Faults of the shared stack (Kafka broker, Kafka Connect, PostgreSQL; `shared: true`) run only
 * when the services are the local stack's own processes (see sharedFaultsAllowed).
 */
export interface Fault {
  readonly name: string;
  /** Breaks a service other suites share (see sharedFaultsAllowed). */
  readonly shared?: boolean;
  inject(ctx: FaultContext): Promise<FaultOutcome | void>;
}

/** The tier holding the most partitions, and its partitions. */
async function busiestTier(ctx: FaultContext): Promise<[RunningApp, Set<number>]> {
  const o = await owners(ctx.d);
  const tiers = ctx.d.apps('delay-tier');
  if (tiers.length < 2) throw new Error('a delay-tier fault needs a standby running');
  const victim = [...tiers].sort(
    (a, b) => (o.get(b.instanceId)?.length ?? 0) - (o.get(a.instanceId)?.length ?? 0),
  )[0] as RunningApp;
  return [victim, new Set(o.get(victim.instanceId))];
}

/** Every partition's epoch held by a running tier other than `not`. */
async function ownedByOthers(ctx: FaultContext, not: RunningApp): Promise<boolean> {
  const o = await owners(ctx.d);
  const others = new Set(
    ctx.d
      .apps('delay-tier')
      .filter((t) => t !== not)
      .map((t) => t.instanceId),
  );
  return (
    [...o].filter(([owner]) => others.has(owner)).reduce((n, [, ps]) => n + ps.length, 0) === ctx.partitions
  );
}

async function restart(ctx: FaultContext, kind: 'tracker' | 'ingest' | 'api'): Promise<void> {
  const [victim] = ctx.d.apps(kind);
  if (!victim) throw new Error(`no ${kind} running`);
  await ctx.d.kill(victim, 'SIGKILL');
  await ctx.d.startApp(kind);
}

const delayTierOwnerKill: Fault = {
  name: 'delay-tier owner SIGKILL (standby running)',
  async inject(ctx) {
    const [victim, partitions] = await busiestTier(ctx);
    const atMs = Date.now();
    await ctx.d.kill(victim, 'SIGKILL');
    await eventually('the standby to take every partition', () => ownedByOthers(ctx, victim), 60_000);
    await ctx.d.startApp('delay-tier'); // a new standby, as the supervisor would start
    return { orphaned: { partitions, atMs } };
  },
};

/** A worker stopped (SIGSTOP) until its running attempts ran again elsewhere, then woken. */
const workerPaused: Fault = {
  name: 'worker SIGSTOP past its lease',
  async inject(ctx) {
    const victim = ctx.workers.busiest()[0];
    if (!victim) throw new Error('no worker running');
    const running = [...(ctx.workers.inFlight.get(victim.name) ?? [])];
    const stoppedAt = Date.now();
    await ctx.d.kill(victim, 'SIGSTOP');
    // Past its lease (5 s) and session (6 s): its attempts reaped and retried with a new fence.
    await eventually(
      'the paused worker’s attempts to run again elsewhere',
      async () => {
        const { rows } = await ctx.d.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND fence >= 2',
          [running],
        );
        return rows[0]?.n === running.length && Date.now() - stoppedAt > 11_000;
      },
      90_000,
    );
    await ctx.d.kill(victim, 'SIGCONT');
    // A zombie shuts itself down (onZombie: 'shutdown'); the pool replaces it.
    if (running.length > 0)
      await eventually('the zombie to exit', () => victim.child.exitCode !== null, 30_000);
  },
};

/** Two owners of the same partitions: the woken one's epoch is stale, its dispatches refused. */
const splitBrain: Fault = {
  name: 'two delay-tier owners (owner SIGSTOPped past its session, woken)',
  async inject(ctx) {
    const [victim] = await busiestTier(ctx);
    await ctx.d.kill(victim, 'SIGSTOP');
    await eventually('the standby to take every partition', () => ownedByOthers(ctx, victim), 60_000);
    await ctx.d.kill(victim, 'SIGCONT');
    await eventually(
      'every partition owned',
      async () => (await ownedCount(ctx.d)) === ctx.partitions,
      60_000,
    );
  },
};

/** Redis loses every key (FLUSHALL on the suite's private redis-server). */
async function flushRedis(ctx: FaultContext): Promise<void> {
  const r = ctx.redis.client();
  try {
    await r.flushall();
  } finally {
    await r.quit();
  }
}

const redisFaults: Fault[] = [
  {
    name: 'Redis SIGKILL and restart (empty)',
    inject: (ctx) => ctx.redis.restart(),
  },
  { name: 'Redis FLUSHALL', inject: flushRedis },
  {
    name: 'Redis partial key loss (half the keys)',
    async inject(ctx) {
      const rnd = seededRandom(ctx.seed ^ 0x5eed);
      const r = ctx.redis.client();
      try {
        const keys = await r.keys(`${ctx.ns.prefix}*`);
        const lost = keys.filter(() => rnd() < 0.5);
        if (lost.length > 0) await r.del(...lost);
      } finally {
        await r.quit();
      }
    },
  },
];

/**
 * Redis loses everything, then a worker group never seen before joins (a new deployment of
 * service chaos-a under another group id): it starts where chaos-a's group is, so it is handed
 * tasks of jobs that finished, and only PostgreSQL can tell it so. The checker counts its handler
 * calls of finished jobs and changes to terminal jobs (both must be 0).
 */
const newGroupAfterRedisLoss: Fault = {
  name: 'Redis FLUSHALL, then a new worker group joins',
  async inject(ctx) {
    await flushRedis(ctx);
    const role = CHAOS_SERVICES[0];
    await ctx.workers.startWorker({ ...role, groupId: `${ctx.ns.prefix}chaos-late-${Date.now()}` });
  },
};

/**
 * Whether the shared stack's services may be crashed: they must be this repository's local stack
 * (processes it can SIGKILL and start again, not URLs from the environment or containers), and
 * KAIROS_CHAOS_SHARED=0 opts out (the chaos project runs last and alone, but a second test run
 * on the same stack would feel it).
 */
export function sharedFaultsAllowed(source: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return source === 'local stack' && env.KAIROS_CHAOS_SHARED !== '0';
}

/**
 * A delay tier joins (scaling out): the group rebalances and the newcomer takes a share of the
 * partitions from the running owners, each handed over under a new epoch.
 */
export const delayTierJoin: Fault = {
  name: 'delay-tier joins',
  async inject(ctx) {
    const joined = await ctx.d.startApp('delay-tier');
    await eventually(
      'the new tier to own a share of the partitions',
      async () =>
        ((await owners(ctx.d)).get(joined.instanceId)?.length ?? 0) > 0 &&
        (await ownedCount(ctx.d)) === ctx.partitions,
      60_000,
    );
  },
};

/** The default suite's faults, in order (every app, the workers, Redis, then the shared stack). */
export const FAULTS: readonly Fault[] = [
  delayTierOwnerKill,
  { name: 'tracker SIGKILL', inject: (ctx) => restart(ctx, 'tracker') },
  { name: 'ingest SIGKILL', inject: (ctx) => restart(ctx, 'ingest') },
  { name: 'api SIGKILL', inject: (ctx) => restart(ctx, 'api') },
  {
    name: 'worker SIGKILL',
    async inject(ctx) {
      const victim = ctx.workers.busiest()[0];
      if (!victim) throw new Error('no worker running');
      await ctx.d.kill(victim, 'SIGKILL');
    },
  },
  workerPaused,
  splitBrain,
  ...redisFaults,
  newGroupAfterRedisLoss,
  ...STACK_FAULTS,
];
