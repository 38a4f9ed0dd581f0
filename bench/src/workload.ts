import type { Adapter, BenchEnv } from './adapter.js';
import { cpuSample, cpuSecondsBetween } from './cpu.js';

export type Size = 'small' | 'full';

export interface Measurement {
  readonly workload: string;
  readonly variant: string;
  readonly system: string;
  readonly metric: string;
  readonly unit: string;
  readonly value: number;
  readonly lost?: number;
  readonly duplicated?: number;
  /** CPU seconds of this process and the services per 1,000 jobs. */
  readonly cpuPer1000?: number;
}

export interface WorkloadContext {
  readonly adapter: Adapter;
  readonly env: BenchEnv;
  readonly size: Size;
  readonly cpuRoots: readonly number[];
  readonly log: (line: string) => void;
  /** W2's worker concurrency levels (--concurrency); default 1, 24, 100. */
  readonly concurrency?: readonly number[];
}

export interface Workload {
  readonly id: string;
  /** Other names it can be selected by on the command line. */
  readonly aliases?: readonly string[];
  readonly title: string;
  /** Systems it applies to (undefined: all). */
  readonly only?: readonly string[];
  /** It sets up (and tears down) what it measures itself: the runner skips setup and warm-up. */
  readonly ownSetup?: boolean;
  /** Not part of `all`: run only when named (it needs more than the local stack, or long). */
  readonly byNameOnly?: boolean;
  run(ctx: WorkloadContext): Promise<Measurement[]>;
}

/** Records handler starts per key, and lets a workload wait (bounded) until keys have started. */
export class StartLog {
  readonly counts = new Map<string, number>();
  readonly firstStart = new Map<string, number>();
  #waiters: { keys: Set<string>; done: () => void }[] = [];

  readonly onStart = (key: string, atMs: number): void => {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (!this.firstStart.has(key)) this.firstStart.set(key, atMs);
    for (const w of this.#waiters) {
      w.keys.delete(key);
      if (w.keys.size === 0) w.done();
    }
    this.#waiters = this.#waiters.filter((w) => w.keys.size > 0);
  };

  /** Resolves true once every key has started, false after timeoutMs. */
  waitAll(keys: readonly string[], timeoutMs: number): Promise<boolean> {
    const pending = new Set(keys.filter((k) => !this.counts.has(k)));
    if (pending.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#waiters.push({
        keys: pending,
        done: () => {
          clearTimeout(timer);
          resolve(true);
        },
      });
    });
  }
}

/** Rows of one variant sharing everything but the metric, its unit and value. */
export function rowsOf(base: Omit<Measurement, 'metric' | 'unit' | 'value'>) {
  return (metric: string, unit: string, value: number): Measurement => ({ ...base, metric, unit, value });
}

/** Measures wall time and CPU seconds of fn. */
export async function measured<T>(roots: readonly number[], fn: () => Promise<T>) {
  const cpu0 = cpuSample(roots);
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  return { result, seconds, cpu: cpuSecondsBetween(cpu0, cpuSample(roots)) };
}

export function keys(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

/** Gives lingering duplicates a moment to show up before the delivery check. */
export const settle = (ms = 500) => new Promise((r) => setTimeout(r, ms));

/** A short run before measuring: connections, JIT and the systems' own caches are warm. */
export async function warmUp(adapter: Adapter): Promise<void> {
  const starts = new StartLog();
  const ks = keys('warmup', 100);
  await adapter.startWorker(10, starts.onStart);
  await adapter.enqueue(
    ks.map((key) => ({ key, dueAtMs: null })),
    'batch',
  );
  await starts.waitAll(ks, 60_000);
  await adapter.stopWorker();
}
