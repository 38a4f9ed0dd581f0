/**
 * What every system under test implements, so each workload drives Kairos and its peers the same
 * way: same PostgreSQL / Redis, no-op handlers, jobs identified by a key carried in the payload.
 */

import type { HarnessServices } from '@kairos/ops';

/** Where the shared services are, and a namespace unique to this run of this system. */
export interface BenchEnv extends HarnessServices {
  /** Lower-case letters and digits, unique per (run, system): use it for schemas, prefixes, queue names. */
  readonly namespace: string;
}

export interface BenchJob {
  /** Identity of the job for the delivery check (carried in the payload as `{ key }`). */
  readonly key: string;
  /** Absolute due time in ms since the epoch; null means "now". */
  readonly dueAtMs: number | null;
}

/** single: one enqueue call per job; batch: one call for all the given jobs. */
export type EnqueueMode = 'single' | 'batch';

/** Called as a handler starts: the job's key and Date.now() at handler entry. */
export type OnStart = (key: string, startedAtMs: number) => void;

export interface Adapter {
  readonly name: string;
  /** Prepares an empty queue in env.namespace (schema, key prefix, queue name, topics…). */
  setup(env: BenchEnv): Promise<void>;
  /** Enqueues jobs; resolves once the system has durably accepted all of them. */
  enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void>;
  /** Starts in-process workers with a no-op handler at this concurrency. */
  startWorker(concurrency: number, onStart: OnStart): Promise<void>;
  /** Stops the in-process workers (waiting for running handlers). */
  stopWorker(): Promise<void>;
  /**
   * For the crash workload: the command line of a worker in a child process (run with this
   * Node), which prints `START <key> <startedAtMs>` on stdout as each handler starts and
   * `DONE <key>` as each finishes, and handles each job in `handlerMs` milliseconds.
   */
  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> };
  /** Removes everything setup created. */
  teardown(): Promise<void>;
}
