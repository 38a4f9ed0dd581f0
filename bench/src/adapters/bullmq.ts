import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Adapter, BenchEnv, BenchJob, EnqueueMode, OnStart } from '../adapter.js';
import { keyOf, logError, requireEnv, workerProcessCommand, type StartWorker } from './common.js';

const queueName = (env: BenchEnv): string => `bench-${env.namespace}`;

// BullMQ's blocking reads must wait forever rather than fail after ioredis' default 20 retries.
const connection = (env: BenchEnv): ConnectionOptions => ({ url: env.redisUrl, maxRetriesPerRequest: null });

const delayOf = (job: BenchJob): number => (job.dueAtMs === null ? 0 : Math.max(0, job.dueAtMs - Date.now()));

/**
 * Stock worker options besides concurrency. A killed worker's jobs keep their lock until it expires
 * (lockDuration 30 s); a live worker's stalled check (every stalledInterval, 30 s) then moves them back
 * to wait, so they rerun 30–60 s later, and fail for good if they stall more than maxStalledCount (1) times.
 */
export const startBullmqWorker: StartWorker = async (env, concurrency, handler) => {
  const worker = new Worker(
    queueName(env),
    async (job) => {
      await handler(keyOf(job.data));
    },
    { connection: connection(env), concurrency },
  );
  worker.on('error', (err) => logError('bullmq', err));
  await worker.waitUntilReady();
  return () => worker.close();
};

export class BullmqAdapter implements Adapter {
  readonly name = 'bullmq';
  #env: BenchEnv | undefined;
  #queue: Queue | undefined;
  #stopWorker: (() => Promise<void>) | undefined;

  async setup(env: BenchEnv): Promise<void> {
    this.#env = env;
    // Completed and failed jobs are dropped at once so Redis memory stays flat over a long run.
    this.#queue = new Queue(queueName(env), {
      connection: connection(env),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    this.#queue.on('error', (err) => logError('bullmq', err));
    await this.#queue.waitUntilReady();
  }

  async enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void> {
    const queue = this.#requireQueue();
    if (mode === 'batch') {
      await queue.addBulk(
        jobs.map((job) => ({ name: 'bench', data: { key: job.key }, opts: { delay: delayOf(job) } })),
      );
      return;
    }
    for (const job of jobs) await queue.add('bench', { key: job.key }, { delay: delayOf(job) });
  }

  async startWorker(concurrency: number, onStart: OnStart): Promise<void> {
    if (this.#stopWorker) throw new Error('bullmq worker already started');
    this.#stopWorker = await startBullmqWorker(requireEnv(this.#env), concurrency, (key) =>
      onStart(key, Date.now()),
    );
  }

  async stopWorker(): Promise<void> {
    const stop = this.#stopWorker;
    this.#stopWorker = undefined;
    await stop?.();
  }

  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> } {
    return workerProcessCommand('bullmq', requireEnv(this.#env), concurrency, handlerMs);
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    const queue = this.#queue;
    this.#queue = undefined;
    if (!queue) return;
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }

  #requireQueue(): Queue {
    if (!this.#queue) throw new Error('bullmq adapter used before setup()');
    return this.#queue;
  }
}
