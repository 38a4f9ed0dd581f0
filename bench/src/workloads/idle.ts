import { setTimeout as sleep } from 'node:timers/promises';
import { cpuByLabel, cpuSample, processLabel, stackPidsByName } from '../cpu.js';
import { ROOT, stackDir } from '../services.js';
import { StartLog, type Measurement, type Workload } from '../workload.js';

/** The services each system needs; their idle cost is its own (Kafka's is Kairos's, not BullMQ's). */
const SERVICES: Record<string, readonly string[]> = {
  kairos: ['postgres', 'redis', 'kafka', 'connect', 'registry'],
  bullmq: ['redis'],
  'pg-boss': ['postgres'],
  'graphile-worker': ['postgres'],
};

/**
 * W9 idle: what a deployment costs with nothing due — its apps, a started worker (concurrency
 * 10) and the services it needs, over a window after a warm-up and a few seconds of settling.
 * Reported as % of one core in all, and per process (apps, worker, each service) in the log.
 */
export const idle: Workload = {
  id: 'w9',
  aliases: ['idle'],
  title: 'W9 idle cost',
  async run({ adapter, size, log }) {
    const windowMs = size === 'full' ? 30_000 : 10_000;
    const starts = new StartLog();
    await adapter.startWorker(10, starts.onStart);
    try {
      await sleep(5000); // start-up work (group joins, first metadata, JIT) is not idle cost
      const stack = [...stackPidsByName(stackDir(ROOT))];
      const uses = ([name]: [string, number]) => (SERVICES[adapter.name] ?? []).includes(name);
      const services = new Map(stack.filter(uses));
      const roots = [...services.values()];
      // Services this system does not use stay out, even when the bench started them (its children).
      const unused = stack.filter((s) => !uses(s)).map(([, pid]) => pid);
      const before = cpuSample(roots, unused);
      const t0 = performance.now();
      await sleep(windowMs);
      const seconds = (performance.now() - t0) / 1000;
      const byLabel = cpuByLabel(before, cpuSample(roots, unused), (pid) => processLabel(pid, services));
      const total = [...byLabel.values()].reduce((a, b) => a + b, 0);
      log(
        `  ${adapter.name} idle, % of one core: ${[...byLabel]
          .filter(([, s]) => s > 0)
          .sort((a, b) => b[1] - a[1])
          .map(([name, s]) => `${name} ${((100 * s) / seconds).toFixed(2)}`)
          .join(', ')}`,
      );
      const row = (variant: string, value: number): Measurement => ({
        workload: 'W9',
        variant,
        system: adapter.name,
        metric: 'CPU',
        unit: '% of one core',
        value,
      });
      const own = [...byLabel]
        .filter(([name]) => !services.has(name) && name !== 'postgres')
        .reduce((a, [, s]) => a + s, 0);
      return [
        row(`whole deployment, ${windowMs / 1000} s`, (100 * total) / seconds),
        row(`apps and worker only, ${windowMs / 1000} s`, (100 * own) / seconds),
      ];
    } finally {
      await adapter.stopWorker();
    }
  },
};
