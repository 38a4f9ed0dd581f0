import { PgBoss, type ConstructorOptions, type JobInsert } from 'pg-boss';
import type { Adapter, BenchEnv, BenchJob, EnqueueMode, OnStart } from '../adapter.js';
import { dropSchema, keyOf, logError, requireEnv, workerProcessCommand, type StartWorker } from './common.js';

const queue = 'bench';
const schemaOf = (env: BenchEnv): string => `pgboss_${env.namespace}`;

async function startBoss(env: BenchEnv, extra: Partial<ConstructorOptions> = {}): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: env.pgUrl, schema: schemaOf(env), ...extra });
  boss.on('error', (err) => logError('pg-boss', err));
  return boss.start();
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function runLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * pg-boss 12 sleeps pollingIntervalSeconds (at least 0.5 s) after every fetch that is not "full", so
 * `localConcurrency: n, batchSize: 1` would give each of the n loops at most ~2 jobs/s (burstWhenBatchFull
 * is ignored at batchSize 1, and burstWhenReadyExceeds reads a ready count cached for up to a minute).
 * Instead one loop (localConcurrency 1) fetches up to `concurrency` jobs per round trip, runs them side
 * by side, and refetches at once while batches come back full (burstWhenBatchFull). A batch is settled
 * when its slowest job finishes, so about `concurrency` run at once, never more. At concurrency 1 the
 * batch is 2 jobs run one after the other, the second locked meanwhile, so that bursting still applies.
 * LISTEN/NOTIFY (useListenNotify + the queue's `notify`, see setup) wakes an idle loop on each insert,
 * as Graphile Worker does; deferred jobs still wait for the 0.5 s poll.
 * A killed worker's jobs stay active until expireInSeconds (default 900 s) has passed and a supervising
 * instance's pass (superviseIntervalSeconds, default 60 s) retries them: about 15–16 minutes.
 */
export const startPgBossWorker: StartWorker = async (env, concurrency, handler) => {
  const boss = await startBoss(env, { useListenNotify: true });
  try {
    await boss.work<{ key: string }>(
      queue,
      {
        batchSize: Math.max(2, concurrency),
        localConcurrency: 1,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: 0.5,
      },
      async (jobs) => {
        await runLimited(jobs, concurrency, async (job) => {
          await handler(keyOf(job.data));
        });
      },
    );
  } catch (err) {
    await boss.stop({ graceful: false });
    throw err;
  }
  return () => boss.stop({ graceful: true });
};

const startAfterOf = (job: BenchJob): { startAfter?: Date } =>
  job.dueAtMs === null ? {} : { startAfter: new Date(job.dueAtMs) };

export class PgBossAdapter implements Adapter {
  readonly name = 'pg-boss';
  #env: BenchEnv | undefined;
  #boss: PgBoss | undefined;
  #stopWorker: (() => Promise<void>) | undefined;

  async setup(env: BenchEnv): Promise<void> {
    this.#env = env;
    this.#boss = await startBoss(env);
    await this.#boss.createQueue(queue, { notify: true });
  }

  async enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void> {
    const boss = this.#requireBoss();
    if (mode === 'batch') {
      const inserts: JobInsert[] = jobs.map((job) => ({ data: { key: job.key }, ...startAfterOf(job) }));
      await boss.insert(queue, inserts);
      return;
    }
    for (const job of jobs) await boss.send(queue, { key: job.key }, startAfterOf(job));
  }

  async startWorker(concurrency: number, onStart: OnStart): Promise<void> {
    if (this.#stopWorker) throw new Error('pg-boss worker already started');
    this.#stopWorker = await startPgBossWorker(requireEnv(this.#env), concurrency, (key) =>
      onStart(key, Date.now()),
    );
  }

  async stopWorker(): Promise<void> {
    const stop = this.#stopWorker;
    this.#stopWorker = undefined;
    await stop?.();
  }

  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> } {
    return workerProcessCommand('pg-boss', requireEnv(this.#env), concurrency, handlerMs);
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    const boss = this.#boss;
    this.#boss = undefined;
    await boss?.stop({ graceful: true });
    if (this.#env) await dropSchema(this.#env.pgUrl, schemaOf(this.#env));
  }

  #requireBoss(): PgBoss {
    if (!this.#boss) throw new Error('pg-boss adapter used before setup()');
    return this.#boss;
  }
}
