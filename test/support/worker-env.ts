import type { Namespace } from './namespace.js';

/** Lease and session timings of a worker process; the SDK's defaults where left out. */
export interface WorkerTimings {
  readonly leaseMs?: number;
  readonly heartbeatMs?: number;
  readonly sessionTimeoutMs?: number;
}

/** WORKER_ENV of test/support/worker-process.ts: a worker on the `default` class of the namespace. */
export function workerProcessEnv(ns: Namespace, timings: WorkerTimings = {}): string {
  return JSON.stringify({
    kafkaBrokers: ns.services.kafkaBrokers,
    registryUrl: ns.services.registryUrl,
    redisUrl: ns.services.redisUrl,
    pgUrl: ns.services.pgUrl,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: ['default'],
    ...timings,
  });
}
