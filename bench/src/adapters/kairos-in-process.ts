import { InProcessPipeline } from '@kairos/ops';
import type { Worker } from '@kairos/worker-sdk';
import { Redis } from 'ioredis';
import type { Adapter, BenchEnv, BenchJob, EnqueueMode, OnStart } from '../adapter.js';
import { CLASS, jobRequest, kairosWorkerCommand } from './kairos-common.js';

/**
 * Kairos with api, delay tier, tracker and worker all in this process (InProcessPipeline), for
 * W7, which measures the delay tier's internals through its hooks. Every other workload measures
 * Kairos as users deploy it: KairosAdapter, one OS process per app.
 */
export class KairosInProcessAdapter implements Adapter {
  readonly name = 'kairos';
  #env: BenchEnv | undefined;
  #pipeline: InProcessPipeline | undefined;
  #worker: Worker | undefined;
  /** Hooks for the per-hop workload. */
  onDispatched: ((jobKey: string, atMs: number) => void) | undefined;
  onScheduled: ((jobKey: string, atMs: number) => void) | undefined;
  #dispatched = 0;
  #dispatchWaiters: { n: number; done: () => void }[] = [];

  get pipeline(): InProcessPipeline {
    if (!this.#pipeline) throw new Error('kairos adapter not set up');
    return this.#pipeline;
  }

  async setup(env: BenchEnv): Promise<void> {
    this.#env = env;
    this.#pipeline = await InProcessPipeline.start({
      services: env,
      id: env.namespace,
      prefix: `b${env.namespace}.`,
      schema: `b_${env.namespace}`,
      resourceClasses: [CLASS],
      api: false,
      logLevel: 'error',
      onScheduled: (record, atMs) => {
        if (this.onScheduled) this.onScheduled((JSON.parse(record.payload) as { key: string }).key, atMs);
      },
      onDispatched: (record, atMs) => {
        this.#dispatched++;
        this.#dispatchWaiters = this.#dispatchWaiters.filter((w) =>
          w.n <= this.#dispatched ? (w.done(), false) : true,
        );
        if (this.onDispatched) this.onDispatched((JSON.parse(record.payload) as { key: string }).key, atMs);
      },
    });
  }

  /**
   * Resolves once `n` jobs (counted since setup) were dispatched to their task topic: for Kairos a
   * due job is "ready to drain" when it sits in Kafka, as a due job sits in a peer's queue.
   */
  waitDispatched(n: number, timeoutMs: number): Promise<boolean> {
    if (this.#dispatched >= n) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#dispatchWaiters.push({
        n,
        done: () => {
          clearTimeout(timer);
          resolve(true);
        },
      });
    });
  }

  async enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void> {
    const request = jobRequest;
    if (mode === 'batch') {
      await this.pipeline.commands.createJobs(jobs.map(request));
      return;
    }
    // One create per call, grouped with concurrent ones as the API's are (group commit).
    for (const j of jobs) await this.pipeline.commands.createJob(request(j));
  }

  async startWorker(concurrency: number, onStart: OnStart): Promise<void> {
    const worker = this.pipeline.worker({ concurrency, groupId: `b${this.#env?.namespace}.workers` });
    worker.handle<{ key: string }>('bench', (payload) => onStart(payload.key, Date.now()));
    await worker.start();
    this.#worker = worker;
  }

  async stopWorker(): Promise<void> {
    await this.#worker?.stop();
    this.#worker = undefined;
  }

  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> } {
    if (!this.#env) throw new Error('kairos adapter not set up');
    return kairosWorkerCommand(this.#env, concurrency, handlerMs);
  }

  async teardown(): Promise<void> {
    await this.#pipeline?.stop();
    this.#pipeline = undefined;
    if (this.#env) await dropKeys(this.#env.redisUrl, `b${this.#env.namespace}.*`);
  }
}

/**
 * Deletes a run's Redis keys: version markers and attempt records outlive their jobs by days (by
 * design, see the hot set), so without this every full run leaves a few hundred MB behind.
 */
export async function dropKeys(url: string, pattern: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
