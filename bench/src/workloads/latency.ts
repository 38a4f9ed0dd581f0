import { summarize } from '../stats.js';
import { deliveryCheck } from '../stats.js';
import { keys, measured, settle, StartLog, type Measurement, type Workload } from '../workload.js';

/** W3: immediate jobs, create → handler start: 1 at a time, then open loop at fixed rates. */
export const latency: Workload = {
  id: 'w3',
  title: 'W3 immediate latency',
  async run({ adapter, size, cpuRoots }) {
    const out: Measurement[] = [];
    const starts = new StartLog();
    await adapter.startWorker(100, starts.onStart);
    try {
      // Sequential: each job is created only after the previous one's handler started.
      const seq = keys('w3-seq', size === 'full' ? 1000 : 50);
      const sent = new Map<string, number>();
      const m = await measured(cpuRoots, async () => {
        for (const key of seq) {
          sent.set(key, Date.now());
          await adapter.enqueue([{ key, dueAtMs: null }], 'single');
          await starts.waitAll([key], 30_000);
        }
      });
      out.push(...latencyRows(adapter.name, 'sequential', seq, sent, starts, (m.cpu / seq.length) * 1000));

      // Open loop: sends at fixed intervals whatever the system does; latency counts from the
      // intended send time, so a system that falls behind shows it (no coordinated omission).
      const rates = size === 'full' ? [100, 1000, 5000] : [100, 500];
      const seconds = size === 'full' ? 10 : 2;
      for (const rate of rates) {
        const ks = keys(`w3-r${rate}`, rate * seconds);
        const intended = new Map<string, number>();
        const t0 = Date.now() + 100;
        const mm = await measured(cpuRoots, async () => {
          // A client has a bounded number of connections: at most 256 enqueues in flight, the
          // rest wait their turn (their latency still counts from their intended time).
          const inflight = new Set<Promise<void>>();
          for (let i = 0; i < ks.length; i++) {
            const key = ks[i] ?? '';
            const at = t0 + (i * 1000) / rate;
            const wait = at - Date.now();
            if (wait > 1) await new Promise((r) => setTimeout(r, wait));
            intended.set(key, at);
            while (inflight.size >= 256) await Promise.race(inflight);
            const p: Promise<void> = adapter
              .enqueue([{ key, dueAtMs: null }], 'single')
              .finally(() => inflight.delete(p));
            inflight.add(p);
          }
          await Promise.all(inflight);
          await starts.waitAll(ks, 120_000);
        });
        out.push(
          ...latencyRows(
            adapter.name,
            `open loop ${rate}/s`,
            ks,
            intended,
            starts,
            (mm.cpu / ks.length) * 1000,
          ),
        );
      }
      await settle();
    } finally {
      await adapter.stopWorker();
    }
    return out;
  },
};

function latencyRows(
  system: string,
  variant: string,
  ks: readonly string[],
  sent: ReadonlyMap<string, number>,
  starts: StartLog,
  cpuPer1000: number,
): Measurement[] {
  const samples = ks.flatMap((k) => {
    const s = starts.firstStart.get(k);
    const t = sent.get(k);
    return s !== undefined && t !== undefined ? [s - t] : [];
  });
  const sum = summarize(samples);
  const { lost, duplicated } = deliveryCheck(ks, starts.counts);
  const row = (metric: string, value: number): Measurement => ({
    workload: 'W3',
    variant,
    system,
    metric,
    unit: 'ms',
    value,
    lost,
    duplicated,
    cpuPer1000,
  });
  return [row('p50', sum.p50), row('p99', sum.p99), row('p99.9', sum.p999)];
}
