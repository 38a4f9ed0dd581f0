import { Logger, makeWorkerUtils, run, type WorkerUtils } from 'graphile-worker';
import type { Adapter, BenchEnv, BenchJob, EnqueueMode, OnStart } from '../adapter.js';
import { dropSchema, keyOf, logError, requireEnv, workerProcessCommand, type StartWorker } from './common.js';

const task = 'bench';
const schemaOf = (env: BenchEnv): string => `graphile_worker_${env.namespace}`;

// The default logger prints info lines on stdout, which a worker process reserves for START/DONE.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') logError('graphile-worker', message);
});

const runAtOf = (job: BenchJob): { runAt?: Date } =>
  job.dueAtMs === null ? {} : { runAt: new Date(job.dueAtMs) };

/**
 * Each of the `concurrency` workers fetches its next job as soon as it finishes one, and LISTEN/NOTIFY
 * wakes idle ones on insert, so pollInterval only bounds how late a deferred job is noticed. The pool
 * gets concurrency + 2 connections, as Graphile recommends. The local queue (batch fetching) stays off,
 * its default. A killed worker's jobs stay locked until the lock is 4 hours old: get_job treats older
 * locks as free, and the runner sweeps them every 8–10 minutes.
 */
export const startGraphileWorker: StartWorker = async (env, concurrency, handler) => {
  const runner = await run({
    connectionString: env.pgUrl,
    schema: schemaOf(env),
    concurrency,
    maxPoolSize: Math.max(10, concurrency + 2),
    noHandleSignals: true,
    pollInterval: 100,
    logger,
    taskList: {
      [task]: async (payload) => {
        await handler(keyOf(payload));
      },
    },
  });
  runner.promise.catch((err: unknown) => logError('graphile-worker', err));
  return () => runner.stop();
};

export class GraphileWorkerAdapter implements Adapter {
  readonly name = 'graphile-worker';
  #env: BenchEnv | undefined;
  #utils: WorkerUtils | undefined;
  #stopWorker: (() => Promise<void>) | undefined;

  async setup(env: BenchEnv): Promise<void> {
    this.#env = env;
    this.#utils = await makeWorkerUtils({ connectionString: env.pgUrl, schema: schemaOf(env), logger });
    await this.#utils.migrate();
  }

  async enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void> {
    const utils = this.#requireUtils();
    if (mode === 'batch') {
      await utils.addJobs(
        jobs.map((job) => ({ identifier: task, payload: { key: job.key }, ...runAtOf(job) })),
      );
      return;
    }
    for (const job of jobs) await utils.addJob(task, { key: job.key }, runAtOf(job));
  }

  async startWorker(concurrency: number, onStart: OnStart): Promise<void> {
    if (this.#stopWorker) throw new Error('graphile-worker worker already started');
    this.#stopWorker = await startGraphileWorker(requireEnv(this.#env), concurrency, (key) =>
      onStart(key, Date.now()),
    );
  }

  async stopWorker(): Promise<void> {
    const stop = this.#stopWorker;
    this.#stopWorker = undefined;
    await stop?.();
  }

  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> } {
    return workerProcessCommand('graphile-worker', requireEnv(this.#env), concurrency, handlerMs);
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    const utils = this.#utils;
    this.#utils = undefined;
    await utils?.release();
    if (this.#env) await dropSchema(this.#env.pgUrl, schemaOf(this.#env));
  }

  #requireUtils(): WorkerUtils {
    if (!this.#utils) throw new Error('graphile-worker adapter used before setup()');
    return this.#utils;
  }
}
