import { loadavg } from 'node:os';
import { InProcessPipeline } from '@kairos/ops';
import { HotSet } from '@kairos/redis';
import { Redis } from 'ioredis';
import { KairosInProcessAdapter } from '../adapters/kairos-in-process.js';
import { stackPids } from '../cpu.js';
import { ROOT, stackDir } from '../services.js';
import { deliveryCheck } from '../stats.js';
import {
  keys,
  measured,
  rowsOf,
  settle,
  StartLog,
  type Measurement,
  type Workload,
  type WorkloadContext,
  warmUp,
} from '../workload.js';

/**
 * W7 (Kairos only): the delay tier on its own terms, the figures its design issue asks for.
 * - herd: N jobs all due in the same second, created (in batches) before it: how fast the tier
 *   drains them (N / (last dispatch − due), on Redis time) and how late each dispatch is;
 * - memory: Redis bytes per job waiting in the hot set (INFO used_memory delta, and the exact
 *   MEMORY USAGE of the namespace's keys);
 * - rebuild: the namespace's Redis keys deleted at once (FLUSHALL of one deployment): how soon
 *   the tier notices (STALE_EPOCH on its next script → rebuild) and how long until the hot sets
 *   hold all N again;
 * - steady load: 1,000 jobs/s each due 2 s after creation, pre-dispatch off and at 200 ms (one
 *   pipeline start each): handler start − due at a worker (which holds early tasks), and
 *   dispatch − due at the tier.
 */

const CLASS = 'default';
const HOT_AHEAD_MS = 20 * 60_000; // inside the default 60-min lookahead, far from dispatch
const LAG_RATE = 1000; // jobs/s
const LAG_DUE_IN_MS = 2000;
const LAG_TICK_MS = 50;
const PRE_DISPATCH = [0, 200] as const;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** Nearest-rank percentiles of signed samples (with pre-dispatch a dispatch comes before due). */
function spread(samples: readonly number[]): { min: number; p50: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) =>
    s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  return { min: s[0] ?? NaN, p50: at(50), p99: at(99), max: s.at(-1) ?? NaN };
}

function request(key: string, dueAtMs: number | null) {
  return {
    tenant: 'bench',
    type: 'bench',
    resource_class: CLASS,
    payload: { key },
    ...(dueAtMs === null ? {} : { due_at: new Date(dueAtMs).toISOString() }),
  };
}

/** The CLI's CPU roots, or the local stack's when it passed none (the in-process tier runs alone). */
function cpuRootsOf(ctx: WorkloadContext): readonly number[] {
  return ctx.cpuRoots.length > 0 ? ctx.cpuRoots : stackPids(stackDir(ROOT));
}

/** One line per variant as soon as it is measured: an interrupted run still leaves its figures. */
function logRows(log: (line: string) => void, rows: readonly Measurement[]): void {
  for (const variant of new Set(rows.map((r) => r.variant))) {
    const figures = rows
      .filter((r) => r.variant === variant)
      .map((r) => `${r.metric} ${Number.isInteger(r.value) ? r.value : r.value.toFixed(1)} ${r.unit}`);
    log(`  = ${variant}: ${figures.join('; ')}`);
  }
}

/** Jobs in the hot sets (waiting and in flight), over the partitions the tier owns. */
async function hotJobs(hot: HotSet, partitions: readonly number[]): Promise<number> {
  const all = await Promise.all(partitions.map((p) => hot.stats(p)));
  return all.reduce((n, s) => n + s.jobs, 0);
}

async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= end) return false;
    await sleep(everyMs);
  }
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
}

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const k of batch) found.add(k);
  } while (cursor !== '0');
  return [...found];
}

/** Exact MEMORY USAGE (SAMPLES 0) of the keys: all, and the per-job version markers (`:v:`). */
async function keyBytes(redis: Redis, ks: readonly string[]): Promise<{ total: number; versions: number }> {
  let total = 0;
  let versions = 0;
  for (let i = 0; i < ks.length; i += 1000) {
    const chunk = ks.slice(i, i + 1000);
    const pipe = redis.pipeline();
    for (const k of chunk) pipe.call('MEMORY', 'USAGE', k, 'SAMPLES', '0');
    const res = (await pipe.exec()) ?? [];
    res.forEach(([err, v], j) => {
      if (err || v === null) return; // expired or deleted meanwhile
      const b = Number(v);
      total += b;
      if (chunk[j]?.includes(':v:')) versions += b;
    });
  }
  return { total, versions };
}

/**
 * Unlinks the keys in one MULTI, so the tier cannot rebuild between two chunks (and lose what it
 * rebuilt to a later chunk). Retried: a shared Redis may refuse it for a moment (another test
 * lowering maxmemory makes Redis abort the transaction).
 */
async function unlinkAtOnce(redis: Redis, ks: readonly string[], log: (line: string) => void): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const multi = redis.multi();
    for (let i = 0; i < ks.length; i += 10_000) multi.unlink(...ks.slice(i, i + 10_000));
    try {
      await multi.exec();
      return;
    } catch (err) {
      const previous = (err as { previousErrors?: Error[] }).previousErrors ?? [];
      const why = [String(err), ...previous.map((e) => e.message)].join('; ');
      if (attempt >= 5) throw new Error(`could not unlink the namespace's keys: ${why}`, { cause: err });
      log(`  unlink refused (${why}); retrying`);
      await sleep(2000);
    }
  }
}

/**
 * Memory per hot job, then the rebuild after the namespace's keys are gone. Returns the rows and
 * how long N jobs took from the first create to all of them in the hot set.
 */
async function hotSetPhases(
  { env, size, cpuRoots, log }: WorkloadContext,
  adapter: KairosInProcessAdapter,
  inHot: () => Promise<number>,
  n: number,
): Promise<{ rows: Measurement[]; hotSeconds: number }> {
  const partitions = adapter.pipeline.delayTier.ownedPartitions();
  const prefix = `b${env.namespace}.`; // the pipeline's Redis key prefix (see KairosAdapter.setup)
  const redis = new Redis(env.redisUrl); // no key prefix: sees the namespace's keys as stored
  const rows: Measurement[] = [];
  const row = (variant: string, metric: string, unit: string, value: number, cpu?: number): Measurement => ({
    workload: 'W7',
    variant,
    system: 'kairos',
    metric,
    unit,
    value,
    ...(cpu === undefined ? {} : { cpuPer1000: (cpu / n) * 1000 }),
  });
  try {
    // --- Memory: N jobs due far ahead (inside the lookahead window) sit in the hot set.
    const base = await inHot();
    const usedBefore = await usedMemory(redis);
    const keysBefore = await keyBytes(redis, await scanKeys(redis, `${prefix}*`));
    const ks = keys('w7-hot', n);
    const t0 = Date.now();
    const dueFrom = t0 + HOT_AHEAD_MS;
    for (let i = 0; i < n; i += 1000) {
      await adapter.enqueue(
        ks.slice(i, i + 1000).map((key, j) => ({ key, dueAtMs: dueFrom + ((i + j) % 1000) * 60 })),
        'batch',
      );
    }
    const allHot = await until(
      async () => (await inHot()) >= base + n,
      size === 'full' ? 600_000 : 120_000,
      200,
    );
    const hotSeconds = (Date.now() - t0) / 1000;
    if (!allHot) throw new Error(`only ${(await inHot()) - base} of ${n} jobs reached the hot set`);
    log(`  ${n} jobs created and in the hot set after ${hotSeconds.toFixed(1)} s`);
    await settle(1000);
    const usedAfter = await usedMemory(redis);
    const keysAfter = await keyBytes(redis, await scanKeys(redis, `${prefix}*`));
    const memVariant = `${n.toLocaleString('en-US')} jobs in the hot set`;
    rows.push(
      row(memVariant, 'redis per hot job (used_memory)', 'bytes', (usedAfter - usedBefore) / n),
      row(memVariant, 'redis per hot job (MEMORY USAGE)', 'bytes', (keysAfter.total - keysBefore.total) / n),
      row(memVariant, 'of which version marker', 'bytes', (keysAfter.versions - keysBefore.versions) / n),
    );

    // --- Rebuild: every key of the namespace unlinked in one transaction (FLUSHALL for this
    // deployment only: the Redis is shared). The tier notices on its next script (STALE_EPOCH →
    // Ownership.onStale → rebuild from PostgreSQL); detection = its epoch key is back.
    const epochKeys = partitions.map((p) => `${prefix}kairos:{${p}}:epoch`);
    const all = await scanKeys(redis, `${prefix}*`);
    const missingEpochs = epochKeys.filter((k) => !all.includes(k));
    if (missingEpochs.length > 0) throw new Error(`epoch keys not found: ${missingEpochs.join(', ')}`);
    const detectedAt = new Map<string, number>();
    let rebuiltMs = NaN;
    const m = await measured(cpuRoots, async () => {
      await unlinkAtOnce(redis, all, log);
      const r0 = performance.now();
      // Until the hot sets hold all N again and every partition's epoch is back (a partition
      // rebuilt between two polls shows as detected on the next one).
      const done = await until(
        async () => {
          const now = performance.now() - r0;
          const epochs = await redis.mget(...epochKeys);
          epochs.forEach((v, i) => {
            const k = epochKeys[i] ?? '';
            if (v !== null && !detectedAt.has(k)) detectedAt.set(k, now);
          });
          if (Number.isNaN(rebuiltMs) && (await inHot()) >= n) rebuiltMs = performance.now() - r0;
          return !Number.isNaN(rebuiltMs) && detectedAt.size === epochKeys.length;
        },
        size === 'full' ? 600_000 : 120_000,
        5,
      );
      if (!done) log(`  rebuild not complete: ${await inHot()} of ${n} jobs back`);
    });
    const detected = [...detectedAt.values()];
    const rbVariant = `rebuild of ${n.toLocaleString('en-US')} hot jobs`;
    rows.push(
      row(rbVariant, 'detected, first partition', 'ms', detected.length ? Math.min(...detected) : NaN, m.cpu),
      row(
        rbVariant,
        `detected, all ${partitions.length} partitions`,
        'ms',
        detected.length === epochKeys.length ? Math.max(...detected) : NaN,
        m.cpu,
      ),
      row(rbVariant, 'rebuild time', 's', rebuiltMs / 1000, m.cpu),
      row(rbVariant, 'rebuild rate', 'jobs/s', n / (rebuiltMs / 1000), m.cpu),
    );
    log(`  ${all.length} keys unlinked; hot sets whole again after ${(rebuiltMs / 1000).toFixed(2)} s`);
    return { rows, hotSeconds };
  } finally {
    redis.disconnect();
  }
}

/** N jobs due in one second, created before it: drain rate and dispatch lateness. */
async function herd(
  { size, cpuRoots, log }: WorkloadContext,
  adapter: KairosInProcessAdapter,
  inHot: () => Promise<number>,
  n: number,
  hotSeconds: number,
): Promise<Measurement[]> {
  const ks = keys('w7-herd', n);
  const base = await inHot();
  // Lead from how long the same number of jobs took to reach the hot set just before, with room:
  // creating the herd next to N waiting jobs (and on a shared machine) can take longer. The
  // `not in hot set at due` row says whether it was enough.
  const due = Math.ceil((Date.now() + hotSeconds * 3000 + 5000) / 1000) * 1000;
  const at = new Map<string, number>();
  let lastAckedAt = NaN; // local clock once the tier reported it: produced to Kafka and acked
  let duplicated = 0;
  let allDone: (() => void) | undefined;
  const everyOne = new Promise<void>((r) => (allDone = r));
  adapter.onDispatched = (key, atMs) => {
    if (!key.startsWith('w7-herd-')) return;
    if (at.has(key)) duplicated++;
    else at.set(key, atMs);
    lastAckedAt = Date.now();
    if (at.size >= n) allDone?.();
  };
  try {
    for (let i = 0; i < n; i += 1000) {
      await adapter.enqueue(
        ks.slice(i, i + 1000).map((key) => ({ key, dueAtMs: due })),
        'batch',
      );
    }
    await until(async () => (await inHot()) >= base + n || Date.now() >= due - 300, due - Date.now(), 200);
    const notHot = Math.max(0, base + n - (await inHot()));
    log(`  herd in the hot set ${((due - Date.now()) / 1000).toFixed(1)} s before due (${notHot} not yet)`);
    await sleep(due - 100 - Date.now());
    const m = await measured(cpuRoots, () =>
      Promise.race([everyOne, sleep(size === 'full' ? 600_000 : 120_000)]),
    );
    await settle();
    const times = [...at.values()];
    const lateness = times.map((t) => t - due);
    const s = spread(lateness);
    const drainMs = times.length ? times.reduce((a, b) => Math.max(a, b)) - due : NaN;
    const variant = `herd of ${n.toLocaleString('en-US')} due in one second`;
    const row = (metric: string, unit: string, value: number): Measurement => ({
      workload: 'W7',
      variant,
      system: 'kairos',
      metric,
      unit,
      value,
      lost: n - at.size,
      duplicated,
      cpuPer1000: (m.cpu / n) * 1000,
    });
    return [
      row('drain rate', 'jobs/s', drainMs > 0 ? at.size / (drainMs / 1000) : NaN),
      // The dispatch instant above is the Redis TIME of the pop; this one ends when the last
      // round's Kafka produce and Redis ack were done.
      row('drain rate, produced', 'jobs/s', at.size / ((lastAckedAt - due) / 1000)),
      row('dispatch lateness p50', 'ms', s.p50),
      row('dispatch lateness p99', 'ms', s.p99),
      row('dispatch lateness max', 'ms', s.max),
      row('early', 'jobs', lateness.filter((l) => l < 0).length),
      row('not in hot set at due', 'jobs', notHot),
    ];
  } finally {
    adapter.onDispatched = undefined;
  }
}

/**
 * Steady 1,000 jobs/s, each due 2 s after its creation, on a pipeline of its own started with
 * this pre-dispatch setting: handler start − due (the worker holds an early task) and dispatch − due.
 */
async function steady(
  { env, size, cpuRoots, log }: WorkloadContext,
  preDispatchMs: number,
): Promise<Measurement[]> {
  const ns = `${env.namespace}p${preDispatchMs}`;
  const dispatched = new Map<string, number>();
  const due = new Map<string, number>();
  const pipeline = await InProcessPipeline.start({
    services: env,
    id: ns,
    prefix: `b${ns}.`,
    schema: `b_${ns}`,
    resourceClasses: [CLASS],
    api: false,
    logLevel: 'error',
    delayTier: { preDispatchMs },
    onDispatched: (record, atMs) => {
      const key = (JSON.parse(record.payload) as { key: string }).key;
      if (!dispatched.has(key)) dispatched.set(key, atMs);
    },
  });
  try {
    const starts = new StartLog();
    const worker = pipeline.worker({ concurrency: 100, groupId: `b${ns}.workers` });
    worker.handle<{ key: string }>('bench', (payload) => starts.onStart(payload.key, Date.now()));
    await worker.start();
    // Warm-up as the CLI does for every cell: connections, JIT, caches.
    const warm = keys(`w7-warm${preDispatchMs}`, 100);
    await pipeline.commands.createJobs(warm.map((k) => request(k, null)));
    if (!(await starts.waitAll(warm, 60_000))) log(`  warm-up incomplete`);

    const seconds = size === 'full' ? 60 : 10;
    const perTick = (LAG_RATE * LAG_TICK_MS) / 1000;
    const ticks = (seconds * 1000) / LAG_TICK_MS;
    const ks: string[] = [];
    const m = await measured(cpuRoots, async () => {
      // Open loop: a batch every tick whatever the pipeline does; at most 16 creates in flight.
      const inflight = new Set<Promise<unknown>>();
      let failure: unknown;
      const t0 = Date.now() + 100;
      for (let i = 0; i < ticks && failure === undefined; i++) {
        const tickAt = t0 + i * LAG_TICK_MS;
        await sleep(tickAt - Date.now());
        const batch = keys(`w7-lag${preDispatchMs}-${i}`, perTick);
        for (const k of batch) {
          due.set(k, tickAt + LAG_DUE_IN_MS);
          ks.push(k);
        }
        while (inflight.size >= 16) await Promise.race(inflight);
        const p: Promise<unknown> = pipeline.commands
          .createJobs(batch.map((k) => request(k, tickAt + LAG_DUE_IN_MS)))
          .catch((err: unknown) => (failure ??= err))
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      await Promise.all(inflight);
      if (failure !== undefined)
        throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
      return starts.waitAll(ks, 120_000);
    });
    await settle();
    await worker.stop();
    const lag = (at: ReadonlyMap<string, number>) =>
      ks.flatMap((k) => {
        const a = at.get(k);
        const d = due.get(k);
        return a !== undefined && d !== undefined ? [a - d] : [];
      });
    const handler = lag(starts.firstStart);
    const h = spread(handler);
    const d = spread(lag(dispatched));
    const { lost, duplicated } = deliveryCheck(ks, starts.counts);
    const variant = `${LAG_RATE.toLocaleString('en-US')}/s due in ${LAG_DUE_IN_MS / 1000} s, pre-dispatch ${preDispatchMs ? `${preDispatchMs} ms` : 'off'}`;
    const row = rowsOf({
      workload: 'W7',
      variant,
      system: 'kairos',
      lost,
      duplicated,
      cpuPer1000: (m.cpu / ks.length) * 1000,
    });
    return [
      row('handler lag p50', 'ms', h.p50),
      row('handler lag p99', 'ms', h.p99),
      row('handler lag max', 'ms', h.max),
      row('dispatch lag p50', 'ms', d.p50),
      row('dispatch lag p99', 'ms', d.p99),
      row('dispatch lag max', 'ms', d.max),
      row('early starts', 'jobs', handler.filter((l) => l < 0).length),
      // Negative: the earliest handler started this long before its due time.
      row('handler lag min', 'ms', h.min),
    ];
  } finally {
    await pipeline.stop();
  }
}

/** The hot-set phases and the herd, on the adapter's pipeline (default tier settings). */
async function hotSetAndHerd(
  ctx: WorkloadContext,
  adapter: KairosInProcessAdapter,
  n: number,
): Promise<Measurement[]> {
  const { log } = ctx;
  const out: Measurement[] = [];
  // Hot sets are read on a connection of our own, so polling never queues behind the tier's calls.
  const partitions = adapter.pipeline.delayTier.ownedPartitions();
  const statsRedis = new Redis(ctx.env.redisUrl, { keyPrefix: `b${ctx.env.namespace}.` });
  const hot = new HotSet(statsRedis);
  const inHot = () => hotJobs(hot, partitions);
  try {
    log(`  hot-set memory and rebuild, ${n} jobs`);
    const hotPhases = await hotSetPhases(ctx, adapter, inHot, n);
    out.push(...hotPhases.rows);
    logRows(log, hotPhases.rows);
    log(`  herd of ${n}`);
    const herdRows = await herd(ctx, adapter, inHot, n, hotPhases.hotSeconds);
    out.push(...herdRows);
    logRows(log, herdRows);
  } finally {
    statsRedis.disconnect();
  }
  return out;
}

export const tier: Workload = {
  id: 'w7',
  aliases: ['tier'],
  title: 'W7 delay tier',
  only: ['kairos'],
  ownSetup: true,
  async run(context) {
    const { size } = context;
    // The machine's load with each phase: other work on the two cores shows in every figure here.
    const log = (line: string) => context.log(`${line} (load ${loadavg()[0]?.toFixed(2)})`);
    const ctx = { ...context, log, cpuRoots: cpuRootsOf(context) };
    if (context.adapter.name !== 'kairos') return [];
    // The tier's internals are measured through its hooks: api, tier, tracker and worker in this
    // process, unlike every other workload.
    const adapter = new KairosInProcessAdapter();
    const out: Measurement[] = [];
    try {
      await adapter.setup(context.env);
      await warmUp(adapter);
      out.push(...(await hotSetAndHerd(ctx, adapter, size === 'full' ? 100_000 : 5_000)));
    } finally {
      // Its jobs due later would keep a loaded pipeline polling next to the measured ones.
      await adapter.teardown();
    }
    for (const preDispatchMs of PRE_DISPATCH) {
      log(`  steady ${LAG_RATE}/s, pre-dispatch ${preDispatchMs} ms`);
      const rows = await steady(ctx, preDispatchMs);
      out.push(...rows);
      logRows(log, rows);
    }
    return out;
  },
};
