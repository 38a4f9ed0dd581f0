import type { Worker, WorkerOptions } from '@kairos/worker-sdk';

/** A test worker process reports on stdout, one line each (the test parses them). */
export const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** Quiet, except the line that tells the test the worker found out it is a zombie. */
export const zombieLogger: NonNullable<WorkerOptions['logger']> = {
  info: () => undefined,
  warn: () => undefined,
  error: (_obj, msg) => {
    if (msg === 'ZombieWriteSuppressed') say('ZOMBIE');
  },
};

/**
 * Starts a test's worker process and says READY; on SIGTERM, or once a zombie attempt made the
 * worker stop itself (onZombie: 'shutdown'), it stops, closes `pool`, says STOPPED and exits 0.
 */
export async function serveWorker(worker: Worker, pool: { end(): Promise<void> }): Promise<void> {
  await worker.start();
  say('READY');
  const stop = () =>
    void worker
      .stop()
      .then(() => pool.end())
      .then(() => {
        say('STOPPED');
        process.exit(0);
      });
  process.once('SIGTERM', stop);
  const poll = setInterval(() => {
    if (worker.zombieAttempts > 0) {
      clearInterval(poll);
      stop();
    }
  }, 100);
}

/** Where a test worker process finds the namespace's services (its JSON environment). */
export interface WorkerServices {
  readonly kafkaBrokers: string;
  readonly registryUrl: string;
  readonly redisUrl: string;
  readonly pgUrl: string;
  readonly prefix: string;
  readonly schema: string;
  readonly resourceClasses: string[];
}

/** The options every test worker process shares: the namespace's services; a zombie stops it. */
export function workerOptions(env: WorkerServices): WorkerOptions {
  return {
    brokers: env.kafkaBrokers.split(','),
    registryUrl: env.registryUrl,
    resourceClasses: env.resourceClasses,
    topicPrefix: env.prefix,
    redisUrl: env.redisUrl,
    redisKeyPrefix: env.prefix,
    shutdownTimeoutMs: 5000,
    onZombie: 'shutdown',
    logger: zombieLogger,
  };
}
