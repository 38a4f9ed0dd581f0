import { KairosAdapter } from '../adapters/kairos.js';
import { keys, measured, type Measurement, type Workload } from '../workload.js';

const FAR_FUTURE_MS = 3600_000;

/** W1: enqueue throughput — one at a time, 64 in flight, and batches of 100 (jobs due in 1 h). */
export const enqueue: Workload = {
  id: 'w1',
  title: 'W1 enqueue',
  async run({ adapter, size, cpuRoots }) {
    const n = size === 'full' ? 100_000 : 2_000;
    const due = Date.now() + FAR_FUTURE_MS;
    const out: Measurement[] = [];
    const variants: [string, (ks: string[]) => Promise<void>][] = [
      [
        'one at a time',
        (ks) =>
          adapter.enqueue(
            ks.map((key) => ({ key, dueAtMs: due })),
            'single',
          ),
      ],
      [
        '64 in flight',
        async (ks) => {
          let next = 0;
          await Promise.all(
            Array.from({ length: 64 }, async () => {
              while (next < ks.length) {
                const key = ks[next++];
                if (key !== undefined) await adapter.enqueue([{ key, dueAtMs: due }], 'single');
              }
            }),
          );
        },
      ],
      [
        'batches of 100',
        async (ks) => {
          for (let i = 0; i < ks.length; i += 100) {
            await adapter.enqueue(
              ks.slice(i, i + 100).map((key) => ({ key, dueAtMs: due })),
              'batch',
            );
          }
        },
      ],
    ];
    if (adapter instanceof KairosAdapter) {
      // Kafka producers' way in: requests to schedule-requests, applied by the ingest.
      variants.push([
        'schedule-requests, 64 in flight',
        (ks) =>
          adapter.enqueueViaTopic(
            ks.map((key) => ({ key, dueAtMs: due })),
            64,
          ),
      ]);
    }
    for (const [variant, fn] of variants) {
      // One-at-a-time is the slowest path by design; a tenth of the jobs shows its rate.
      const count = variant === 'one at a time' ? Math.max(200, n / 10) : n;
      const ks = keys(`w1-${variant.replaceAll(' ', '')}`, count);
      const m = await measured(cpuRoots, () => fn(ks));
      out.push({
        workload: 'W1',
        variant,
        system: adapter.name,
        metric: 'throughput',
        unit: 'jobs/s',
        value: count / m.seconds,
        cpuPer1000: (m.cpu / count) * 1000,
      });
    }
    return out;
  },
};
