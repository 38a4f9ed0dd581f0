import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { startRedisCluster, type RedisCluster } from '@kairos/ops';
import { KairosAdapter } from '../adapters/kairos.js';
import { componentLabel, cpuByLabel, cpuSample, netOfIdle, stackPidsByName } from '../cpu.js';
import { perJob, readFootprint, type Footprint } from '../footprint.js';
import { ROOT, stackDir } from '../services.js';
import { deliveryCheck, summarize } from '../stats.js';
import {
  keys,
  rowsOf,
  settle,
  StartLog,
  warmUp,
  type Measurement,
  type Workload,
  type WorkloadContext,
} from '../workload.js';
import { settledSplit } from './failover.js';

/**
 * W11 scale (Kairos only, run by name: it starts a Redis Cluster of its own). The same herd on
 * 1, 2 and 3 delay-tier processes over 8, 16 and 32 job-events partitions, every app its own OS
 * process and every hot set on a three-master Redis Cluster: N jobs created through the HTTP API,
 * all due in one second, handled by one worker process. Per configuration: the tier's dispatch
 * rate and lateness (dispatched_at − due: the Redis TIME of the pop, recorded in PostgreSQL), the end-to-end
 * rate (handler starts), CPU per job by component over the whole life of the jobs (create to
 * start), and what each job wrote: Redis commands, PostgreSQL WAL and rows, Kafka log bytes.
 * On two cores the absolute scaling is bounded: the per-job cost staying flat as instances and
 * partitions grow is what shows there is no cross-instance contention.
 */

const TIERS = [1, 2, 3] as const;
const PARTITIONS = [8, 16, 32] as const;
const WORKER_CONCURRENCY = 100;
/** PostgreSQL flushes an idle backend's table statistics at most this long after its last transaction (PGSTAT_IDLE_INTERVAL). */
const PG_STATS_FLUSH_MS = 10_000;
/** The local stack's services a deployment here uses (not its single Redis, nor optional ones). */
const USED_SERVICES = ['postgres', 'kafka', 'connect', 'registry'];

interface Cell {
  readonly tiers: number;
  readonly partitions: number;
}

/** Creates the herd, all due at one instant, in API batches of 1,000; returns that instant. */
async function createHerd(
  adapter: KairosAdapter,
  ks: readonly string[],
  createMsPer1000: number,
): Promise<number> {
  // Room for creating them all and for CDC to carry them to the hot sets, twice over.
  const lead = 2 * (ks.length / 1000) * createMsPer1000 + 5000;
  const due = Math.ceil((Date.now() + lead) / 1000) * 1000;
  for (let i = 0; i < ks.length; i += 1000) {
    await adapter.enqueue(
      ks.slice(i, i + 1000).map((key) => ({ key, dueAtMs: due })),
      'batch',
    );
  }
  return due;
}

/** Starts the cell's deployment: api, tracker, ingest and `tiers` delay tiers sharing the partitions. */
async function deploy(ctx: WorkloadContext, cluster: RedisCluster, cell: Cell): Promise<KairosAdapter> {
  const adapter = new KairosAdapter();
  await adapter.setup({
    ...ctx.env,
    namespace: `${ctx.env.namespace}t${cell.tiers}p${cell.partitions}`,
    redisUrl: cluster.url,
    jobEventPartitions: cell.partitions,
  });
  for (let i = 1; i < cell.tiers; i++) await adapter.startDelayTier();
  await settledSplit(
    adapter,
    adapter.deployment.apps('delay-tier').map((a) => a.instanceId),
  );
  return adapter;
}

/** Milliseconds per 1,000-job API batch, from one batch due now that the worker must run. */
async function probeCreate(adapter: KairosAdapter): Promise<number> {
  const starts = new StartLog();
  await adapter.startWorker(WORKER_CONCURRENCY, starts.onStart);
  const ks = keys('w11-probe', 1000);
  const t0 = performance.now();
  await adapter.enqueue(
    ks.map((key) => ({ key, dueAtMs: null })),
    'batch',
  );
  const ms = performance.now() - t0;
  await starts.waitAll(ks, 120_000);
  await adapter.stopWorker();
  return ms;
}

interface HerdRun {
  readonly ks: readonly string[];
  readonly due: number;
  readonly starts: StartLog;
  /** CPU seconds by component over the herd's life, less what the component uses idle. */
  readonly cpu: Map<string, number>;
  readonly cost: Footprint;
}

/** One herd: created, due, dispatched and started; CPU by component and what it wrote, per job. */
async function runHerd(ctx: WorkloadContext, adapter: KairosAdapter, cluster: RedisCluster, n: number) {
  const services = stackPidsByName(stackDir(ROOT));
  // Stack services this deployment does not use (its Redis is the cluster below) stay out.
  const unused = [...services].filter(([name]) => !USED_SERVICES.includes(name)).map(([, pid]) => pid);
  const roots = ctx.cpuRoots.filter((pid) => !unused.includes(pid));
  const schema = `b_${adapter.env.namespace}`;
  const kafkaLogDir = resolve(stackDir(ROOT), 'kafka', 'data');
  const sources = {
    redisNodes: cluster.nodes.slice(0, 3).map((node) => `redis://127.0.0.1:${node.port}`),
    pool: adapter.deployment.pool,
    schema,
    kafkaLogDir: existsSync(kafkaLogDir) ? kafkaLogDir : undefined,
  };
  const createMsPer1000 = await probeCreate(adapter);
  const starts = new StartLog();
  await adapter.startWorker(WORKER_CONCURRENCY, starts.onStart);
  const ks = keys('w11-herd', n);
  const label = (sample: ReturnType<typeof cpuSample>) => componentLabel(services, sample);
  // Earlier work's statistics reach pg_stat meanwhile, or they would count as this herd's; the
  // same quiet window gives each component's idle CPU (Connect alone idles at ~4 % of a core),
  // taken off the herd's so that what remains is the cost of the jobs.
  const idle0 = cpuSample(roots, unused);
  const i0 = performance.now();
  await settle(PG_STATS_FLUSH_MS + 1000);
  const idle1 = cpuSample(roots, unused);
  const idleSeconds = (performance.now() - i0) / 1000;
  const idle = cpuByLabel(idle0, idle1, label(idle1));
  const before = await readFootprint(sources);
  const cpu0 = cpuSample(roots, unused);
  const t0 = performance.now();
  const due = await createHerd(adapter, ks, createMsPer1000);
  const all = await starts.waitAll(ks, Math.max(0, due - Date.now()) + 300_000);
  if (!all) ctx.log(`  not every job started: ${starts.firstStart.size} of ${n}`);
  await settle();
  const cpu1 = cpuSample(roots, unused);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = netOfIdle(cpuByLabel(cpu0, cpu1, label(cpu1)), seconds, idle, idleSeconds);
  await adapter.stopWorker();
  await settle(PG_STATS_FLUSH_MS + 1000);
  const cost = perJob(before, await readFootprint(sources), n);
  return { ks, due, starts, cpu, cost } satisfies HerdRun;
}

/** dispatched_at − due_at of the jobs whose key starts with `<prefix>-`: the time of the tier's claim. */
export async function dispatchLateness(adapter: KairosAdapter, prefix: string): Promise<number[]> {
  const { rows } = await adapter.deployment.pool.query<{ late: string | null }>(
    `SELECT (extract(epoch FROM dispatched_at - due_at) * 1000)::text AS late
       FROM jobs WHERE payload->>'key' LIKE $1`,
    [`${prefix}-%`],
  );
  return rows.flatMap((r) => (r.late === null ? [] : [Number(r.late)]));
}

/** The cell's rows from its herd. */
function cellRows(cell: Cell, run: HerdRun, dispatchLate: readonly number[]): Measurement[] {
  const n = run.ks.length;
  const variant = `${cell.tiers} tier${cell.tiers > 1 ? 's' : ''}, ${cell.partitions} partitions`;
  const { lost, duplicated } = deliveryCheck(run.ks, run.starts.counts);
  const handlerLate = run.ks.flatMap((k) => {
    const s = run.starts.firstStart.get(k);
    return s === undefined ? [] : [s - run.due];
  });
  const d = summarize(dispatchLate.map((l) => Math.max(0, l)));
  const h = summarize(handlerLate.map((l) => Math.max(0, l)));
  const kairosCpu = [...run.cpu]
    .filter(([label]) => !label.startsWith('bench'))
    .reduce((a, [, s]) => a + s, 0);
  const row = rowsOf({
    workload: 'W11',
    variant,
    system: 'kairos',
    lost,
    duplicated,
    cpuPer1000: (kairosCpu / n) * 1000,
  });
  const components = [...run.cpu]
    .filter(([label, s]) => s > 0 && !label.startsWith('bench'))
    .sort((a, b) => b[1] - a[1])
    .map(([label, s]) => row(`CPU per job, net of idle: ${label}`, 'ms', (s / n) * 1000));
  return [
    row('dispatch rate', 'jobs/s', (n / Math.max(...dispatchLate, 1)) * 1000),
    row('end-to-end rate', 'jobs/s', (n / Math.max(...handlerLate, 1)) * 1000),
    row('dispatch lateness p50', 'ms', d.p50),
    row('dispatch lateness p99', 'ms', d.p99),
    row('handler lateness p99', 'ms', h.p99),
    row(
      'early dispatches',
      'jobs',
      dispatchLate.filter((l) => l < 0).length + handlerLate.filter((l) => l < 0).length,
    ),
    row('CPU per job, net of idle', 'ms', (kairosCpu / n) * 1000),
    ...components,
    row('Redis commands per job', 'commands', run.cost.redisCommands),
    row('PostgreSQL WAL per job', 'bytes', run.cost.walBytes),
    row('PostgreSQL row writes per job', 'rows', run.cost.rowWrites),
    row('Kafka log bytes per job', 'bytes', run.cost.kafkaBytes),
  ];
}

async function runCell(
  ctx: WorkloadContext,
  cluster: RedisCluster,
  cell: Cell,
  n: number,
): Promise<Measurement[]> {
  const adapter = await deploy(ctx, cluster, cell);
  try {
    await warmUp(adapter);
    const run = await runHerd(ctx, adapter, cluster, n);
    return cellRows(cell, run, await dispatchLateness(adapter, 'w11-herd'));
  } finally {
    await adapter.teardown();
  }
}

export const scale: Workload = {
  id: 'w11',
  aliases: ['scale'],
  title: 'W11 scale',
  only: ['kairos'],
  ownSetup: true,
  byNameOnly: true,
  async run(ctx) {
    if (ctx.adapter.name !== 'kairos') return [];
    const n = ctx.size === 'full' ? 20_000 : 2_000;
    const cluster = await startRedisCluster({ masters: 3 });
    const out: Measurement[] = [];
    try {
      for (const partitions of PARTITIONS) {
        for (const tiers of TIERS) {
          ctx.log(`  ${tiers} delay tier(s), ${partitions} partitions, herd of ${n}`);
          const rows = await runCell(ctx, cluster, { tiers, partitions }, n);
          for (const r of rows)
            ctx.log(`    ${r.metric}: ${r.value.toFixed(r.value < 10 ? 2 : 0)} ${r.unit}`);
          out.push(...rows);
        }
      }
    } finally {
      await cluster.stop();
    }
    return out;
  },
};
