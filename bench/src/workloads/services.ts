import { createKafka, topicNames } from '@kairos/kafka';
import {
  KAIROS_WORKER_SCRIPT,
  jobRequestOf,
  kairosWorkerCommand,
  prefixOf,
} from '../adapters/kairos-common.js';
import { KairosAdapter } from '../adapters/kairos.js';
import type { BenchEnv } from '../adapter.js';
import { componentLabel, cpuByLabel, cpuSample, netOfIdle, stackPidsByName } from '../cpu.js';
import { ROOT, stackDir } from '../services.js';
import { deliveryCheck, summarize } from '../stats.js';
import {
  rowsOf,
  settle,
  StartLog,
  type Measurement,
  type Workload,
  type WorkloadContext,
} from '../workload.js';
import { dispatchLateness } from './scale.js';

/**
 * W12 services (Kairos only, run by name: 20 worker processes are too heavy for `all`). Issue 32
 * says the work per task must not grow with the number of worker services sharing a class: the
 * delay tier routes each task by its type to a service topic with one map lookup (see
 * docs/worker-services.md). The same open-loop load, RATE jobs/s created through the HTTP API in
 * batches every 100 ms, each due LEAD_MS after it is sent, types spread evenly, runs on one class
 * with 1, 5 and 20 named worker services, each its own process handling only its own type. Per
 * cell: CPU per 1,000 tasks by component over the jobs' life (first create to the last one
 * SUCCEEDED), gross and net of each component's idle use in a quiet window just before (workers
 * started and warm); the idle use itself; dispatch lateness (dispatched_at − due, the claim's
 * time); due → handler start; and delivery: every job started once, in its own service.
 *
 * A fourth cell is the control: one service at RATE / 20, the rate each of the 20 services gets.
 * Every component's cost per task depends on its own rate (a fetch, a dispatch round, a commit, a
 * result batch carry fewer tasks at a lower rate), so the workers' CPU per task at 20 services is
 * to be read against the control's, not only against one service's at the full rate.
 */

interface Cell {
  readonly services: number;
  /** Jobs per second, all services together. */
  readonly rate: number;
  /** How long jobs are created for, by size. */
  readonly seconds: { readonly small: number; readonly full: number };
}

const RATE = 200;
const LOAD = { small: 15, full: 60 };
const CELLS: readonly Cell[] = [
  { services: 1, rate: RATE, seconds: LOAD },
  { services: 5, rate: RATE, seconds: LOAD },
  { services: 20, rate: RATE, seconds: LOAD },
  // The control: one service at one twentieth of the rate, over longer for enough tasks.
  { services: 1, rate: RATE / 20, seconds: { small: 30, full: 120 } },
];
/** The class the services share (not `default`: routing within a class other than the bench's). */
const IO = 'io';
/** Each job is due this long after it is sent: the tier's timing is measured, not the create path. */
const LEAD_MS = 3000;
const IDLE_MS = 10_000;
const WORKER_CONCURRENCY = 20;
/** Jobs of the warm-up per service: every service topic and its schema are used once first. */
const WARMUP_PER_SERVICE = 10;
/** Worker processes started at once (each loads the SDK through tsx: CPU-heavy on two cores). */
const START_AT_ONCE = 5;
/** The local stack's services a deployment uses (not optional ones). */
const USED_SERVICES = ['postgres', 'redis', 'kafka', 'connect', 'registry'];

const serviceName = (i: number) => `svc-${i + 1}`;
const jobType = (i: number) => `svc${i + 1}.work`;

/** Handler starts reported by the worker processes' `START <key> <ms> <service>` lines. */
class ServiceStarts extends StartLog {
  /** Starts of a job in a service other than its own. */
  misrouted = 0;
  readonly #expected = new Map<string, string>();

  expect(key: string, service: string): void {
    this.#expected.set(key, service);
  }

  readonly line = (line: string): void => {
    const [kind, key, at, service] = line.split(' ');
    if (kind !== 'START' || key === undefined) return;
    const own = this.#expected.get(key);
    if (own !== undefined && own !== service) this.misrouted++;
    this.onStart(key, Number(at));
  };
}

interface Job {
  readonly key: string;
  readonly service: number;
  readonly dueAtMs: number | null;
}

/** N jobs, job i of service i mod `services`. */
function jobsOf(prefix: string, n: number, services: number, due: (i: number) => number | null): Job[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `${prefix}-${i}`,
    service: i % services,
    dueAtMs: due(i),
  }));
}

const request = (j: Job) => jobRequestOf(j, jobType(j.service), IO);

/** The deployment, its canary off (the jobs table holds only the workload's), and `n` services started. */
async function deploy(adapter: KairosAdapter, env: BenchEnv, n: number, starts: ServiceStarts) {
  await adapter.setup(env, {
    resourceClasses: [IO],
    env: { KAIROS_CANARY_INTERVAL_MS: '0' },
    onLine: (_app, line) => starts.line(line),
  });
  for (let i = 0; i < n; i += START_AT_ONCE) {
    await Promise.all(
      Array.from({ length: Math.min(START_AT_ONCE, n - i) }, (_, k) => {
        const s = i + k;
        const { env: workerEnv } = kairosWorkerCommand(env, WORKER_CONCURRENCY, 0, {
          service: serviceName(s),
          resourceClass: IO,
          jobType: jobType(s),
        });
        return adapter.deployment.startWorker(KAIROS_WORKER_SCRIPT, 'READY', workerEnv);
      }),
    );
  }
}

/** Jobs due now, a few per service, all started: the delay tier routes to every service. */
async function warmUp(adapter: KairosAdapter, n: number, starts: ServiceStarts) {
  const jobs = jobsOf('w12-warmup', WARMUP_PER_SERVICE * n, n, () => null);
  for (const j of jobs) starts.expect(j.key, serviceName(j.service));
  await adapter.createJobs(jobs.map(request));
  if (
    !(await starts.waitAll(
      jobs.map((j) => j.key),
      120_000,
    ))
  )
    throw new Error(`warm-up: ${starts.counts.size} of ${jobs.length} jobs started within 120 s`);
}

/**
 * Sends the jobs open loop: a batch of rate/10 every 100 ms from `t0`, whatever the API answers
 * (at most 16 requests in flight); each job due at its own instant, evenly spaced at the rate.
 */
async function sendOpenLoop(
  adapter: KairosAdapter,
  jobs: readonly Job[],
  t0: number,
  rate: number,
): Promise<number> {
  const perBatch = Math.max(1, rate / 10);
  const every = (perBatch * 1000) / rate;
  const inflight = new Set<Promise<void>>();
  let behindMs = 0;
  for (let b = 0; b * perBatch < jobs.length; b++) {
    const at = t0 + b * every;
    const wait = at - Date.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    while (inflight.size >= 16) await Promise.race(inflight);
    behindMs = Math.max(behindMs, Date.now() - at);
    const p: Promise<void> = adapter
      .createJobs(jobs.slice(b * perBatch, (b + 1) * perBatch).map(request))
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return behindMs;
}

/** Resolves once `n` jobs of the load are SUCCEEDED (the tracker recorded them), false on timeout. */
async function succeeded(adapter: KairosAdapter, prefix: string, n: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let done = 0;
  while (Date.now() < deadline) {
    const { rows } = await adapter.deployment.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM jobs WHERE state = 'SUCCEEDED' AND payload->>'key' LIKE $1`,
      [`${prefix}-%`],
    );
    done = Number(rows[0]?.n);
    if (done >= n) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return done;
}

/**
 * The end offsets of the class's waiting topic, summed: how many tasks went there (no live
 * service handled their type at dispatch, or a worker gave them back). None should at steady state.
 */
async function waitingOffsets(env: BenchEnv): Promise<number> {
  const admin = createKafka({ brokers: env.kafkaBrokers.split(','), clientId: 'bench-w12' }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topicNames(prefixOf(env)).waiting(IO));
    return offsets.reduce((a, o) => a + Number(o.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/** CPU seconds by component of the processes the deployment uses, between two calls. */
function cpuMeter(ctx: WorkloadContext) {
  const services = stackPidsByName(stackDir(ROOT));
  const unused = [...services].filter(([name]) => !USED_SERVICES.includes(name)).map(([, pid]) => pid);
  const roots = ctx.cpuRoots.filter((pid) => !unused.includes(pid));
  const sample = () => ({ at: performance.now(), cpu: cpuSample(roots, unused) });
  return {
    sample,
    since(before: ReturnType<typeof sample>) {
      const after = sample();
      return {
        seconds: (after.at - before.at) / 1000,
        cpu: cpuByLabel(before.cpu, after.cpu, componentLabel(services, after.cpu)),
      };
    },
  };
}

const isKairos = ([label]: [string, number]) => !label.startsWith('bench');
const sum = (m: ReadonlyMap<string, number>) => [...m].filter(isKairos).reduce((a, [, s]) => a + s, 0);
/** The workers' CPU is summed under one label, named for what it is. */
const shown = (label: string) => (label === 'worker' ? 'workers (all)' : label);

/** A cell's name: its services, and its rate where it is not the full one. */
const variantOf = (cell: Cell) =>
  `${cell.services} service${cell.services > 1 ? 's' : ''}${cell.rate === RATE ? '' : ` at ${cell.rate}/s (control)`}`;

async function runCell(ctx: WorkloadContext, adapter: KairosAdapter, cell: Cell, jobs: number) {
  const n = cell.services;
  const starts = new ServiceStarts();
  const env = { ...ctx.env, namespace: `${ctx.env.namespace}s${n}r${cell.rate}` };
  try {
    await deploy(adapter, env, n, starts);
    await warmUp(adapter, n, starts);
    const meter = cpuMeter(ctx);
    // Idle: workers started and warm, nothing due.
    const idle0 = meter.sample();
    await settle(IDLE_MS);
    const idle = meter.since(idle0);
    const prefix = `w12-s${n}r${cell.rate}`;
    const waiting0 = await waitingOffsets(env);
    const t0 = Date.now() + 100;
    const load = jobsOf(prefix, jobs, n, (i) => Math.round(t0 + LEAD_MS + (i * 1000) / cell.rate));
    for (const j of load) starts.expect(j.key, serviceName(j.service));
    const cpu0 = meter.sample();
    const behindMs = await sendOpenLoop(adapter, load, t0, cell.rate);
    if (behindMs > 1000) ctx.log(`    the API fell behind the open loop by up to ${behindMs} ms`);
    const lastDue = load.at(-1)?.dueAtMs ?? Date.now();
    const all = await starts.waitAll(
      load.map((j) => j.key),
      Math.max(0, lastDue - Date.now()) + 120_000,
    );
    if (!all)
      ctx.log(`    not every job started: ${load.filter((j) => starts.counts.has(j.key)).length} of ${jobs}`);
    const done = await succeeded(adapter, prefix, jobs, 60_000);
    await settle();
    const run = meter.since(cpu0);
    const waited = (await waitingOffsets(env)) - waiting0;
    return { load, starts, idle, run, done, waited, dispatchLate: await dispatchLateness(adapter, prefix) };
  } finally {
    await adapter.teardown();
  }
}

function cellRows(variant: string, cell: Awaited<ReturnType<typeof runCell>>): Measurement[] {
  const { load, starts, idle, run } = cell;
  const tasks = load.length;
  const { lost, duplicated } = deliveryCheck(
    load.map((j) => j.key),
    starts.counts,
  );
  const handlerLate = load.flatMap((j) => {
    const s = starts.firstStart.get(j.key);
    return s === undefined || j.dueAtMs === null ? [] : [s - j.dueAtMs];
  });
  const d = summarize(cell.dispatchLate.map((l) => Math.max(0, l)));
  const h = summarize(handlerLate.map((l) => Math.max(0, l)));
  const net = netOfIdle(run.cpu, run.seconds, idle.cpu, idle.seconds);
  const per1000 = (s: number) => (s / tasks) * 1000 * 1000; // CPU ms per 1,000 tasks
  const idleShare = (s: number) => (s / idle.seconds) * 100; // % of one core
  const row = rowsOf({
    workload: 'W12',
    variant,
    system: 'kairos',
    lost,
    duplicated,
    cpuPer1000: (sum(net) / tasks) * 1000,
  });
  const byComponent = (m: ReadonlyMap<string, number>) =>
    [...m].filter((e) => isKairos(e) && e[1] > 0).sort((a, b) => b[1] - a[1]);
  return [
    row('dispatch lateness p50', 'ms', d.p50),
    row('dispatch lateness p99', 'ms', d.p99),
    row('due → handler start p50', 'ms', h.p50),
    row('due → handler start p99', 'ms', h.p99),
    row(
      'early dispatches or starts',
      'jobs',
      cell.dispatchLate.filter((l) => l < 0).length + handlerLate.filter((l) => l < 0).length,
    ),
    row('started in another service', 'jobs', starts.misrouted),
    row('not SUCCEEDED', 'jobs', tasks - cell.done),
    row('tasks through the waiting topic', 'tasks', cell.waited),
    row('CPU per 1,000 tasks, gross', 'CPU ms', per1000(sum(run.cpu))),
    row('CPU per 1,000 tasks, net of idle', 'CPU ms', per1000(sum(net))),
    row('CPU per 1,000 tasks, gross: delay-tier', 'CPU ms', per1000(run.cpu.get('delay-tier') ?? 0)),
    row('CPU per 1,000 tasks, gross: workers (all)', 'CPU ms', per1000(run.cpu.get('worker') ?? 0)),
    ...byComponent(net).map(([label, s]) =>
      row(`CPU per 1,000 tasks, net of idle: ${shown(label)}`, 'CPU ms', per1000(s)),
    ),
    row('idle CPU, whole deployment', '% of a core', idleShare(sum(idle.cpu))),
    ...byComponent(idle.cpu).map(([label, s]) =>
      row(`idle CPU: ${shown(label)}`, '% of a core', idleShare(s)),
    ),
  ];
}

export const services: Workload = {
  id: 'w12',
  aliases: ['services'],
  title: 'W12 services: CPU per task with 1, 5 and 20 worker services on one class',
  only: ['kairos'],
  ownSetup: true,
  byNameOnly: true,
  async run(ctx) {
    if (!(ctx.adapter instanceof KairosAdapter)) return [];
    const out: Measurement[] = [];
    for (const cell of CELLS) {
      const jobs = cell.rate * cell.seconds[ctx.size];
      ctx.log(`  ${cell.services} worker service(s) on class ${IO}, ${jobs} jobs at ${cell.rate}/s`);
      const rows = cellRows(variantOf(cell), await runCell(ctx, ctx.adapter, cell, jobs));
      for (const r of rows) ctx.log(`    ${r.metric}: ${r.value.toFixed(r.value < 10 ? 2 : 0)} ${r.unit}`);
      out.push(...rows);
    }
    return out;
  },
};
