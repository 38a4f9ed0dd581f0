import type { Redis } from 'ioredis';
import type { DrillContext } from './context.js';
import { gaugeByLabel, redisMemory, type ModeSample } from './oom-stats.js';
import { counterSum } from './prom.js';

/** One look at the redis-oom drill's Redis, delay tier and PostgreSQL. */
export interface Sample {
  readonly s: number;
  readonly usedMb: number;
  readonly maxMb: number;
  /** The delay tier's kairos_lookahead_window_seconds (undefined: no answer). */
  readonly windowS: number | undefined;
  /** Partitions with postgres_only_since set in partition_epochs (what the overview shows). */
  readonly pgMarked: number;
}

/** Samples Redis's memory, the tier's modes and window and PostgreSQL's marks every 500 ms. */
export function sample(ctx: DrillContext, redis: Redis, metricsUrl: () => string | undefined) {
  const samples: Sample[] = [];
  const modes: ModeSample[] = [];
  const once = async () => {
    const s = ctx.now() / 1000;
    const mem = redisMemory(await redis.info('memory'));
    const url = metricsUrl();
    const text = url
      ? await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(400) }).then((r) => r.text())
      : '';
    // The tier sets a partition's gauge on its first change: until then it has been hot.
    const fallback = gaugeByLabel(text, 'kairos_pg_fallback_active', 'partition');
    for (let p = 0; url && text && p < ctx.ns.services.jobEventPartitions; p++)
      modes.push({ s, partition: p, mode: fallback.get(String(p)) === 1 ? 'PostgreSQL-only' : 'hot' });
    const { rows } = await ctx.deployment.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM partition_epochs WHERE postgres_only_since IS NOT NULL',
    );
    samples.push({
      s,
      usedMb: mem.used / 2 ** 20,
      maxMb: mem.max / 2 ** 20,
      windowS: text.includes('kairos_lookahead_window_seconds')
        ? counterSum(text, 'kairos_lookahead_window_seconds')
        : undefined,
      pgMarked: rows[0]?.n ?? 0,
    });
  };
  const timer = setInterval(() => void once().catch(() => undefined), 500);
  const pgOnlyNow = (): number[] => {
    const last = new Map<number, string>();
    for (const m of modes) last.set(m.partition, m.mode);
    return [...last].filter(([, mode]) => mode !== 'hot').map(([p]) => p);
  };
  return { samples, modes, pgOnlyNow, stop: () => clearInterval(timer) };
}

export type Sampler = ReturnType<typeof sample>;
