import { Redis } from 'ioredis';
import pg from 'pg';
import type { BenchEnv } from '../adapter.js';
import { deliveryCheck, summarize } from '../stats.js';
import { keys, measured, settle, StartLog, type Measurement, type Workload } from '../workload.js';

async function memory(env: BenchEnv): Promise<{ redis: number; pg: number }> {
  const redis = new Redis(env.redisUrl);
  const info = await redis.info('memory');
  redis.disconnect();
  const client = new pg.Client({ connectionString: env.pgUrl });
  await client.connect();
  const r = await client.query<{ size: string }>('SELECT pg_database_size(current_database())::text AS size');
  await client.end();
  return { redis: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0), pg: Number(r.rows[0]?.size ?? 0) };
}

/**
 * W4: delay accuracy. Jobs with due times spread over a window, then jobs all due in the same
 * millisecond: lateness = handler start − due (p50/p99/max), and how many started early (must be
 * none). Also the memory each waiting job costs in Redis and in PostgreSQL.
 */
export const delay: Workload = {
  id: 'w4',
  title: 'W4 delay accuracy',
  async run({ adapter, env, size, cpuRoots }) {
    const out: Measurement[] = [];
    const spreadN = size === 'full' ? 100_000 : 2_000;
    const spreadMs = size === 'full' ? 60_000 : 10_000;
    const burstN = size === 'full' ? 10_000 : 1_000;
    const lead = size === 'full' ? 45_000 : 8_000; // time to enqueue everything before the first is due
    const starts = new StartLog();
    for (const variant of ['spread', 'same ms'] as const) {
      const n = variant === 'spread' ? spreadN : burstN;
      const ks = keys(`w4-${variant === 'spread' ? 'spread' : 'burst'}`, n);
      const t0 = Date.now() + lead;
      const due = new Map(
        ks.map((k, i) => [k, variant === 'spread' ? t0 + Math.floor((i * spreadMs) / n) : t0]),
      );
      const before = await memory(env);
      for (let i = 0; i < ks.length; i += 1000) {
        await adapter.enqueue(
          ks.slice(i, i + 1000).map((key) => ({ key, dueAtMs: due.get(key) ?? t0 })),
          'batch',
        );
      }
      // Memory once everything waits (give CDC and the hot tier a moment to absorb the events).
      await new Promise((r) => setTimeout(r, Math.min(3000, Math.max(0, t0 - Date.now() - 1000))));
      const after = await memory(env);
      await adapter.startWorker(100, starts.onStart);
      const m = await measured(cpuRoots, () => starts.waitAll(ks, lead + spreadMs + 120_000));
      await settle();
      await adapter.stopWorker();
      const lateness = ks.flatMap((k) => {
        const s = starts.firstStart.get(k);
        const d = due.get(k);
        return s !== undefined && d !== undefined ? [s - d] : [];
      });
      const early = lateness.filter((l) => l < 0).length;
      const sum = summarize(lateness.map((l) => Math.max(0, l)));
      const { lost, duplicated } = deliveryCheck(ks, starts.counts);
      const row = (metric: string, unit: string, value: number): Measurement => ({
        workload: 'W4',
        variant,
        system: adapter.name,
        metric,
        unit,
        value,
        lost,
        duplicated,
        cpuPer1000: (m.cpu / n) * 1000,
      });
      out.push(
        row('lateness p50', 'ms', sum.p50),
        row('lateness p99', 'ms', sum.p99),
        row('lateness max', 'ms', sum.max),
        row('early', 'jobs', early),
        row('redis per job', 'bytes', Math.max(0, (after.redis - before.redis) / n)),
        row('postgres per job', 'bytes', Math.max(0, (after.pg - before.pg) / n)),
      );
      if (variant === 'same ms' && sum.max > 0) {
        // All due at once: how fast the system got every one of them started.
        out.push(row('burst throughput', 'jobs/s', n / (sum.max / 1000)));
      }
    }
    return out;
  },
};
