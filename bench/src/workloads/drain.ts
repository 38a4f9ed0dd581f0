import { KairosAdapter } from '../adapters/kairos.js';
import { deliveryCheck } from '../stats.js';
import { keys, measured, settle, StartLog, type Measurement, type Workload } from '../workload.js';

/** W2: drain jobs that are already due, at concurrency 1, 24 and 100 (or the levels given). */
export const drain: Workload = {
  id: 'w2',
  title: 'W2 drain',
  async run({ adapter, size, cpuRoots, log, concurrency: levels = [1, 24, 100] }) {
    const n = size === 'full' ? 100_000 : 2_000;
    const out: Measurement[] = [];
    let enqueued = 0;
    for (const concurrency of levels) {
      // Concurrency 1 drains one job at a time; a tenth of the jobs shows its rate.
      const count = concurrency === 1 ? Math.max(200, n / 10) : n;
      const ks = keys(`w2-c${concurrency}`, count);
      for (let i = 0; i < ks.length; i += 1000) {
        await adapter.enqueue(
          ks.slice(i, i + 1000).map((key) => ({ key, dueAtMs: null })),
          'batch',
        );
      }
      enqueued += count;
      if (adapter instanceof KairosAdapter && !(await adapter.waitDispatched(enqueued, 300_000))) {
        log(`kairos: not every job was dispatched before the drain`);
      }
      const starts = new StartLog();
      const m = await measured(cpuRoots, async () => {
        await adapter.startWorker(concurrency, starts.onStart);
        return starts.waitAll(ks, size === 'full' ? 900_000 : 120_000);
      });
      await settle();
      await adapter.stopWorker();
      const times = [...starts.firstStart.values()];
      const span = (Math.max(...times) - Math.min(...times)) / 1000;
      const { lost, duplicated } = deliveryCheck(ks, starts.counts);
      out.push({
        workload: 'W2',
        variant: `concurrency ${concurrency}`,
        system: adapter.name,
        metric: 'throughput',
        unit: 'jobs/s',
        // First start to last start: the steady drain rate, without each system's worker start-up.
        value: span > 0 ? (starts.firstStart.size - 1) / span : NaN,
        lost,
        duplicated,
        cpuPer1000: (m.cpu / count) * 1000,
      });
    }
    return out;
  },
};
