import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { keys, type Measurement, type Workload } from '../workload.js';

interface Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
}

/**
 * W6: a worker process is SIGKILLed mid-run and a new one started; after a recovery window,
 * jobs that never completed are lost and jobs whose handler started more than once are
 * duplicated. Every system runs with its default recovery settings (stall/lock/expiry times).
 */
export const crash: Workload = {
  id: 'w6',
  title: 'W6 crash',
  async run({ adapter, size, log }) {
    const n = size === 'full' ? 5000 : 500;
    const windowMs = size === 'full' ? 120_000 : 60_000;
    const ks = keys('w6', n);
    const startsPerKey = new Map<string, number>();
    const done = new Set<string>();
    const killAt = Math.floor(n / 3);
    let onProgress: (() => void) | undefined;

    const spawnWorker = (): Child => {
      const { args, env } = adapter.workerProcess(10, 20);
      const proc = spawn(process.execPath, args, {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      createInterface({ input: proc.stdout }).on('line', (line) => {
        const [kind, key] = line.split(' ');
        if (!key) return;
        if (kind === 'START') startsPerKey.set(key, (startsPerKey.get(key) ?? 0) + 1);
        if (kind === 'DONE') done.add(key);
        onProgress?.();
      });
      proc.stderr.resume();
      return { proc, exited: new Promise((r) => proc.once('exit', () => r())) };
    };

    const first = spawnWorker();
    for (let i = 0; i < ks.length; i += 1000) {
      await adapter.enqueue(
        ks.slice(i, i + 1000).map((key) => ({ key, dueAtMs: null })),
        'batch',
      );
    }
    const reached = (count: number, timeoutMs: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        onProgress = () => {
          if (done.size >= count) {
            clearTimeout(timer);
            onProgress = undefined;
            resolve(true);
          }
        };
        onProgress();
      });
    if (!(await reached(killAt, 120_000))) log(`${adapter.name}: the first worker never got a third through`);
    first.proc.kill('SIGKILL');
    await first.exited;
    const killedAt = Date.now();
    const second = spawnWorker();
    const recovered = await reached(n, windowMs);
    const recoverySeconds = recovered ? (Date.now() - killedAt) / 1000 : NaN;
    second.proc.kill('SIGTERM');
    await Promise.race([second.exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (second.proc.exitCode === null) second.proc.kill('SIGKILL');
    const lost = ks.filter((k) => !done.has(k)).length;
    const duplicated = ks.reduce((a, k) => a + Math.max(0, (startsPerKey.get(k) ?? 0) - 1), 0);
    const row = (metric: string, unit: string, value: number): Measurement => ({
      workload: 'W6',
      variant: `SIGKILL after a third of ${n}, ${windowMs / 1000} s window`,
      system: adapter.name,
      metric,
      unit,
      value,
      lost,
      duplicated,
    });
    return [
      row('lost', 'jobs', lost),
      row('duplicated', 'jobs', duplicated),
      row('recovery', 's', recoverySeconds),
    ];
  },
};
