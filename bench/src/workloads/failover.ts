import { setTimeout as sleep } from 'node:timers/promises';
import { KairosAdapter } from '../adapters/kairos.js';
import { keys, StartLog, type Measurement, type Workload } from '../workload.js';

const TRICKLE_PER_S = 50;

/**
 * W10 failover (Kairos only), on the deployed apps:
 * - delay tier: two instances share the partitions, jobs due now arrive steadily; the instance
 *   that owns the partitions being measured is SIGKILLed; reported: time from the kill to the
 *   standby's first dispatch of one of those partitions, and the worst create → start meanwhile;
 * - worker: two worker processes run long tasks; one is SIGKILLed; reported: time from the kill
 *   until the last of its tasks started again on the other.
 */
export const failover: Workload = {
  id: 'w10',
  aliases: ['failover'],
  title: 'W10 failover',
  only: ['kairos'],
  async run({ adapter, log }) {
    if (!(adapter instanceof KairosAdapter)) return [];
    const row = (variant: string, metric: string, value: number): Measurement => ({
      workload: 'W10',
      variant,
      system: 'kairos',
      metric,
      unit: 'ms',
      value,
    });
    const tier = await tierFailover(adapter, log);
    const worker = await workerFailover(adapter, log);
    return [
      row('delay-tier owner SIGKILL, standby running', 'kill → first dispatch', tier.firstDispatchMs),
      row('delay-tier owner SIGKILL, standby running', 'worst create → start', tier.worstLatencyMs),
      row('worker SIGKILL, tasks running', 'kill → last task started again', worker),
    ];
  },
};

async function owners(adapter: KairosAdapter): Promise<Map<string, number[]>> {
  const { rows } = await adapter.deployment.pool.query<{ owner: string; partition: number }>(
    'SELECT owner, partition FROM partition_epochs',
  );
  const out = new Map<string, number[]>();
  for (const r of rows) out.set(r.owner, [...(out.get(r.owner) ?? []), r.partition]);
  return out;
}

/** Waits until both instances own partitions and the split held for a second. */
export async function settledSplit(
  adapter: KairosAdapter,
  ids: readonly string[],
): Promise<Map<string, number[]>> {
  let last = '';
  for (let i = 0; i < 120; i++) {
    const o = await owners(adapter);
    const now = JSON.stringify(ids.map((id) => o.get(id)?.sort((a, b) => a - b) ?? []));
    if (now === last && ids.every((id) => (o.get(id)?.length ?? 0) > 0)) return o;
    last = now;
    await sleep(1000);
  }
  throw new Error(`the delay tiers never settled on a split: ${last}`);
}

async function tierFailover(adapter: KairosAdapter, log: (line: string) => void) {
  const standby = await adapter.startDelayTier();
  const [victim] = adapter.deployment.apps('delay-tier');
  if (!victim) throw new Error('no delay tier to kill');
  const orphaned = new Set(
    (await settledSplit(adapter, [victim.instanceId, standby.instanceId])).get(victim.instanceId),
  );
  const starts = new StartLog();
  await adapter.startWorker(50, starts.onStart);
  const ks = keys('w10-tier', TRICKLE_PER_S * 25);
  const created = new Map<string, number>();
  let killedAt = NaN;
  const t0 = Date.now();
  await Promise.all(
    ks.map(async (key, i) => {
      await sleep(Math.max(0, t0 + (i * 1000) / TRICKLE_PER_S - Date.now()));
      if (i === TRICKLE_PER_S * 5) {
        killedAt = Date.now();
        void adapter.deployment.kill(victim, 'SIGKILL');
      }
      created.set(key, Date.now());
      await adapter.enqueue([{ key, dueAtMs: null }], 'single');
    }),
  );
  await starts.waitAll(ks, 60_000);
  await adapter.stopWorker();
  const { rows } = await adapter.deployment.pool.query<{ key: string; shard: number; dispatched_at: Date }>(
    `SELECT payload->>'key' AS key, shard, dispatched_at FROM jobs WHERE payload->>'key' LIKE 'w10-tier-%'`,
  );
  const first = Math.min(
    ...rows
      .filter((r) => orphaned.has(r.shard) && r.dispatched_at.getTime() > killedAt)
      .map((r) => r.dispatched_at.getTime()),
  );
  const latency = (k: string) => (starts.firstStart.get(k) ?? NaN) - (created.get(k) ?? NaN);
  const slowest = [...ks].sort((a, b) => latency(b) - latency(a))[0] ?? '';
  const s = rows.find((r) => r.key === slowest);
  log(
    `  delay tier: partitions ${[...orphaned].join(',')} orphaned, first dispatch ${first - killedAt} ms after` +
      ` the kill; slowest job (${latency(slowest)} ms) created ${(created.get(slowest) ?? 0) - killedAt} ms` +
      ` after the kill, shard ${s?.shard}, dispatched ${(s?.dispatched_at.getTime() ?? 0) - killedAt} ms after it`,
  );
  return { firstDispatchMs: first - killedAt, worstLatencyMs: latency(slowest) };
}

async function workerFailover(adapter: KairosAdapter, log: (line: string) => void): Promise<number> {
  /** key -> start times, in order */
  const starts = new Map<string, number[]>();
  const byWorker = new Map<string, number>();
  const onStart = (worker: number) => (key: string, at: number) => {
    starts.set(key, [...(starts.get(key) ?? []), at]);
    if (!byWorker.has(key)) byWorker.set(key, worker);
  };
  const workers = [
    await adapter.spawnWorker(10, onStart(0), 15_000),
    await adapter.spawnWorker(10, onStart(1), 15_000),
  ];
  const ks = keys('w10-worker', 10);
  await adapter.enqueue(
    ks.map((key) => ({ key, dueAtMs: null })),
    'batch',
  );
  for (let i = 0; i < 600 && !ks.every((k) => starts.has(k)); i++) await sleep(100);
  const count = (w: number) => ks.filter((k) => byWorker.get(k) === w).length;
  const victim = count(0) >= count(1) ? 0 : 1;
  const orphaned = ks.filter((k) => byWorker.get(k) === victim);
  const killedAt = Date.now();
  await workers[victim]?.kill('SIGKILL');
  for (let i = 0; i < 600 && !orphaned.every((k) => (starts.get(k)?.length ?? 0) > 1); i++) await sleep(50);
  await adapter.stopWorker();
  const restarted = orphaned.map((k) => (starts.get(k)?.[1] ?? NaN) - killedAt);
  log(`  worker: ${orphaned.length} tasks orphaned, started again after ${restarted.join(', ')} ms`);
  return Math.max(...restarted);
}
