import { resolve } from 'node:path';
import type { BenchEnv, BenchJob } from '../adapter.js';

/** The one resource class the benchmarks use. */
export const CLASS = 'default';

/** Prefix of a run's topics, groups and Redis keys; its schema is `b_<namespace>`. */
export const prefixOf = (env: BenchEnv) => `b${env.namespace}.`;

/** A bench job as the HTTP API (and the command handlers) take it. */
export function jobRequest(j: BenchJob) {
  return {
    tenant: 'bench',
    type: 'bench',
    resource_class: CLASS,
    payload: { key: j.key },
    ...(j.dueAtMs === null ? {} : { due_at: new Date(j.dueAtMs).toISOString() }),
  };
}

/**
 * Command line of kairos-worker-process.ts: a worker service on the public SDK that prints
 * `START <key> <ms>` and `DONE <key>`, and `READY` once started.
 */
export function kairosWorkerCommand(
  env: BenchEnv,
  concurrency: number,
  handlerMs: number,
): { args: string[]; env: Record<string, string> } {
  return {
    args: [
      '--conditions=kairos-source',
      '--import',
      'tsx',
      resolve(import.meta.dirname, 'kairos-worker-process.ts'),
    ],
    env: {
      BENCH_ENV: JSON.stringify(env),
      BENCH_CONCURRENCY: String(concurrency),
      BENCH_HANDLER_MS: String(handlerMs),
    },
  };
}
