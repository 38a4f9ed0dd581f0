import type { Redis } from 'ioredis';
import type { RunningApp } from '../deployment.js';
import { startRedisServer } from '../redis-server.js';
import { tierAdminUrls, type DrillContext } from './context.js';
import type { Drill } from './drill.js';
import { jobChecks, lateness, stateCounts, tallyJobs } from './job-checks.js';
import { oomPlot } from './oom-plot.js';
import { sample, type Sampler } from './oom-sampler.js';
import { longestPgOnly, modeAt, modeSpans, redisMemory, type ModeSpan } from './oom-stats.js';
import { marked } from './plots.js';
import { failed, type Check, type DrillOutcome } from './record.js';
import { spreadJobs } from './workload.js';

/** The private Redis's limit outside the squeeze, MB (the stack's default too). */
const ROOMY_MB = 64;
/** Other data of the Redis (a shared Redis's other tenants): it keeps Redis past the squeezed limit. */
const BALLAST_KEY = 'drill:ballast';
const BALLAST_BYTES = 8 * 1024 * 1024;
/** Room left above what Redis holds when it is squeezed: the surge's first writes fill it. */
const HEADROOM_BYTES = 256 * 1024;
/** The lookahead window and its floor under memory pressure: the seed's 60 → 10 min, scaled down. */
const LOOKAHEAD_MS = 600_000;
const MIN_LOOKAHEAD_MS = 10_000;

/** Squeezes Redis to just above what it holds (with the ballast in it); returns the new limit. */
async function squeeze(redis: Redis): Promise<number> {
  // Made in Redis (zero bytes up to the offset): sent as a value, 8 MB of query buffer would count
  // in used_memory for a moment and set the limit that much too high.
  await redis.setrange(BALLAST_KEY, BALLAST_BYTES - 1, 'x');
  const limit = redisMemory(await redis.info('memory')).used + HEADROOM_BYTES;
  await redis.config('SET', 'maxmemory', String(limit));
  return limit;
}

/** Frees the memory: the ballast goes and the limit is raised back (the seed's new shard). */
async function freeMemory(redis: Redis): Promise<void> {
  await redis.del(BALLAST_KEY);
  await redis.config('SET', 'maxmemory', `${ROOMY_MB}mb`);
}

async function run(ctx: DrillContext, inputs: Readonly<Record<string, number>>): Promise<DrillOutcome> {
  const { jobs: n = 0, surge = 0, hold = 0 } = inputs;
  // A Redis of the drill's own: squeezing the stack's would starve everyone else using it.
  const server = await startRedisServer(['--maxmemory', `${ROOMY_MB}mb`]);
  ctx.defer(() => server.stop());
  ctx.mark('own Redis started', { url: server.url });
  ctx.progress.phase(
    `the drill squeezes a Redis of its own, so your stack's is untouched: ${server.url}, schema ${ctx.ns.schema}`,
  );
  const redis = server.client();
  ctx.defer(() => redis.disconnect());
  const policy = (await redis.config('GET', 'maxmemory-policy'))[1];
  const urls = tierAdminUrls(ctx);
  const d = await ctx.deploy(['api', 'tracker', 'delay-tier'], {
    KAIROS_REDIS_URL: server.url,
    KAIROS_LOOKAHEAD_MS: String(LOOKAHEAD_MS),
    KAIROS_MIN_LOOKAHEAD_MS: String(MIN_LOOKAHEAD_MS),
  });
  const tier = d.apps('delay-tier')[0] as RunningApp;
  const partitions = ctx.ns.services.jobEventPartitions;
  await ctx.waitFor(
    'the delay tier to hold every partition',
    async () => (await ctx.owners()).get(tier.instanceId)?.length === partitions,
    60_000,
  );
  await ctx.startWorker();
  const s = sample(ctx, redis, () => urls.get(tier.name));
  ctx.mark('apps up', { redis: server.url, policy });
  const ids = await ctx.createJobs(spreadJobs(ctx.random, n, 60, 3000));
  ctx.mark('jobs created', { jobs: n });
  await new Promise((r) => setTimeout(r, 6000)); // the hot path at work first, for the plot
  const limit = await squeeze(redis);
  const squeezedAt = ctx.mark('Redis squeezed', { maxmemory: limit });
  ctx.mark('surge begins', { jobs: surge });
  const surgeIds = await ctx.createJobs(spreadJobs(ctx.random, surge, 25, 2000));
  ctx.mark('surge created');
  const allFell = await ctx.until(() => s.pgOnlyNow().length === partitions, 30_000);
  ctx.mark(allFell ? 'all partitions PostgreSQL-only' : 'some partitions PostgreSQL-only', {
    partitions: s.pgOnlyNow(),
  });
  await new Promise((r) => setTimeout(r, Math.max(0, squeezedAt + hold * 1000 - ctx.now())));
  await freeMemory(redis);
  const freedAt = ctx.mark('memory freed');
  const back = await ctx.until(() => s.pgOnlyNow().length === 0, 30_000);
  const recoveryMs = back ? ctx.mark('all partitions hot') - freedAt : NaN;
  const all = [...ids, ...surgeIds];
  await ctx.settle(all, 90_000);
  s.stop();
  ctx.mark('all settled');
  const evicted = Number(/evicted_keys:(\d+)/.exec(await redis.info('stats'))?.[1] ?? NaN);
  return judge(ctx, all, s, { policy, evicted, recoveryMs, squeezedAt, freedAt, partitions });
}

interface Facts {
  readonly policy: string | undefined;
  readonly evicted: number;
  readonly recoveryMs: number;
  readonly squeezedAt: number;
  readonly freedAt: number;
  readonly partitions: number;
}

async function judge(ctx: DrillContext, ids: readonly string[], s: Sampler, f: Facts): Promise<DrillOutcome> {
  const rows = await ctx.jobRows(ids);
  const tally = tallyJobs(rows, await ctx.effects());
  const spans = modeSpans(s.modes);
  const pgOnly = new Set(spans.filter((x) => x.mode !== 'hot').map((x) => x.partition));
  const windows = (from: number, to: number) =>
    s.samples.filter((x) => x.s * 1000 >= from && x.s * 1000 < to && x.windowS !== undefined);
  const before = windows(0, f.squeezedAt).at(-1)?.windowS ?? NaN;
  const during = Math.min(...windows(f.squeezedAt, f.freedAt).map((x) => x.windowS ?? Infinity));
  const after = windows(f.freedAt + f.recoveryMs, Infinity).at(-1)?.windowS ?? NaN;
  const late = lateness(rows, ctx.t0);
  const numbers = {
    jobs: tally.jobs,
    lost: tally.lost,
    early: tally.early,
    duplicates: tally.duplicates,
    evicted: f.evicted,
    pg_only_partitions: pgOnly.size,
    pg_only_s: longestPgOnly(spans),
    window_before_s: before,
    window_during_s: during,
    recovery_ms: f.recoveryMs,
    late_max_ms: Math.max(0, ...late.map((l) => l.lateMs)),
  };
  const checks: Check[] = [
    ...jobChecks(tally),
    { ok: f.policy === 'noeviction', why: `Redis's maxmemory-policy is ${f.policy}, not noeviction` },
    { ok: f.evicted === 0, why: `Redis evicted ${f.evicted} keys` },
    {
      ok: pgOnly.size === f.partitions,
      why: `${pgOnly.size} of ${f.partitions} partitions ran PostgreSQL-only`,
    },
    { ok: s.samples.some((x) => x.pgMarked > 0), why: 'partition_epochs never showed postgres_only_since' },
    { ok: during < before, why: `the lookahead window did not shrink (${before} s → ${during} s)` },
    {
      ok: Number.isFinite(f.recoveryMs),
      why: 'not every partition was back on its hot set 30 s after memory was freed',
    },
    { ok: after === before, why: `the window did not come back (${after} s, was ${before} s)` },
  ];
  return {
    numbers,
    failures: failed(checks),
    plot: oomPlot(
      marked(ctx.timeline, ['Redis squeezed', 'surge begins', 'memory freed', 'all partitions hot']),
      Math.ceil(ctx.now() / 1000),
      { samples: s.samples, spans, dispatches: await dispatches(ctx, ids, spans) },
    ),
    data: { states: stateCounts(rows), samples: s.samples, spans },
  };
}

/** Each dispatched job's lateness by due time, with its partition's mode when it went out. */
async function dispatches(ctx: DrillContext, ids: readonly string[], spans: readonly ModeSpan[]) {
  const { rows } = await ctx.deployment.pool.query<{ shard: number; due_at: Date; dispatched_at: Date }>(
    'SELECT shard, due_at, dispatched_at FROM jobs WHERE id = ANY($1::uuid[]) AND dispatched_at IS NOT NULL',
    [ids],
  );
  return rows.map((r) => ({
    s: (r.due_at.getTime() - ctx.t0) / 1000,
    lateMs: r.dispatched_at.getTime() - r.due_at.getTime(),
    mode: modeAt(spans, r.shard, (r.dispatched_at.getTime() - ctx.t0) / 1000),
  }));
}

export const redisOom: Drill = {
  name: 'redis-oom',
  summary:
    'the drill’s own Redis squeezed to its limit during a surge: partitions run PostgreSQL-only with a shrunk window, nothing lost or early, back on their hot sets once memory is freed',
  options: [
    { name: 'jobs', description: 'jobs due across the first 60 s', default: 1000, min: 10, max: 50_000 },
    {
      name: 'surge',
      description: 'jobs of the surge, due within 25 s of it',
      default: 3000,
      min: 100,
      max: 50_000,
    },
    { name: 'hold', description: 'seconds Redis stays squeezed', default: 30, min: 10, max: 600 },
  ],
  run,
};
