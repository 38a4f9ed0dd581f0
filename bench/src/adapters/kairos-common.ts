import { resolve } from 'node:path';
import type { BenchEnv, BenchJob } from '../adapter.js';

/** The one resource class the benchmarks use. */
export const CLASS = 'default';

/** Prefix of a run's topics, groups and Redis keys; its schema is `b_<namespace>`. */
export const prefixOf = (env: BenchEnv) => `b${env.namespace}.`;

/** A bench job as the HTTP API (and the command handlers) take it: type `bench` on the class `default`. */
export function jobRequest(j: BenchJob) {
  return jobRequestOf(j, 'bench', CLASS);
}

/** A bench job of this type on this resource class, as the HTTP API takes it. */
export function jobRequestOf(j: BenchJob, type: string, resourceClass: string) {
  return {
    tenant: 'bench',
    type,
    resource_class: resourceClass,
    payload: { key: j.key },
    ...(j.dueAtMs === null ? {} : { due_at: new Date(j.dueAtMs).toISOString() }),
  };
}

/** A named worker service of kairos-worker-process.ts: its name, its one class and its one job type. */
export interface WorkerService {
  readonly service: string;
  readonly resourceClass: string;
  readonly jobType: string;
}

/** The worker service process on the public SDK that every Kairos workload runs. */
export const KAIROS_WORKER_SCRIPT = resolve(import.meta.dirname, 'kairos-worker-process.ts');

/**
 * Command line of kairos-worker-process.ts: a worker service on the public SDK that prints
 * `START <key> <ms> <service>` and `DONE <key>`, and `READY` once started. Without `named` it
 * handles type `bench` on the class `default` in the bench's one unnamed group.
 */
export function kairosWorkerCommand(
  env: BenchEnv,
  concurrency: number,
  handlerMs: number,
  named?: WorkerService,
): { args: string[]; env: Record<string, string> } {
  return {
    args: ['--conditions=kairos-source', '--import', 'tsx', KAIROS_WORKER_SCRIPT],
    env: {
      BENCH_ENV: JSON.stringify(env),
      BENCH_CONCURRENCY: String(concurrency),
      BENCH_HANDLER_MS: String(handlerMs),
      ...(named === undefined
        ? {}
        : {
            BENCH_SERVICE: named.service,
            BENCH_CLASS: named.resourceClass,
            BENCH_JOB_TYPE: named.jobType,
          }),
    },
  };
}
