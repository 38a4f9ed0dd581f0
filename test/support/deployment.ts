import { resolve } from 'node:path';
import { ProcessDeployment, type DeploymentOptions, type RunningApp } from '@kairos/ops';
import { expect } from 'vitest';
import type { Namespace } from './namespace.js';
import { eventually, RESOURCE_CLASSES } from './pipeline.js';
import { workerProcessEnv, type WorkerTimings } from './worker-env.js';

/**
 * Kairos as real OS processes (ops ProcessDeployment) inside the test's namespace, so a test can
 * SIGKILL or SIGSTOP an app; every app is stopped and the namespace's setup undone on cleanup.
 */
export async function startDeployment(
  ns: Namespace,
  options: Omit<DeploymentOptions, 'services' | 'id' | 'prefix' | 'schema' | 'resourceClasses'> & {
    /** Services to use instead of the namespace's (e.g. more job-events partitions). */
    readonly services?: Partial<DeploymentOptions['services']>;
  } = {},
): Promise<ProcessDeployment> {
  const level = process.env.KAIROS_TEST_LOG;
  const d = await ProcessDeployment.start({
    ...options,
    // The canary makes jobs of its own every minute: off unless a test asks for it, so a test's
    // snapshot of its namespace's jobs holds only its own (test/integration/canary.test.ts runs it).
    env: { KAIROS_CANARY_INTERVAL_MS: '0', ...options.env },
    // The apps' output goes to the test output when KAIROS_TEST_LOG is set.
    onLine: (app, line) => {
      if (level) console.log(`[${app}] ${line}`);
      options.onLine?.(app, line);
    },
    services: { ...ns.services, ...options.services },
    id: ns.id,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
  });
  ns.defer(() => d.stop());
  return d;
}

const WORKER = resolve(import.meta.dirname, 'worker-process.ts');

/**
 * A worker service process (test/support/worker-process.ts: the SDK with its default lease and
 * session unless `timings` says otherwise) on the `default` class of the test's namespace.
 */
export function startWorkerProcess(
  d: ProcessDeployment,
  ns: Namespace,
  timings: WorkerTimings = {},
): Promise<RunningApp> {
  return d.startWorker(WORKER, 'READY', { WORKER_ENV: workerProcessEnv(ns, timings) });
}

export interface JobView {
  readonly id: string;
  readonly state: string;
  readonly shard: number;
  readonly attempt: number;
}

/** Creates jobs through the deployment's HTTP API (`POST /v1/jobs:batch`). */
export async function createJobsOverHttp(
  d: ProcessDeployment,
  jobs: readonly Record<string, unknown>[],
): Promise<JobView[]> {
  const res = await fetch(`${d.apiUrl}/v1/jobs:batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${d.apiKey}` },
    body: JSON.stringify({ jobs }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { jobs: JobView[] }).jobs;
}

/** Waits until every one of the jobs is SUCCEEDED in PostgreSQL. */
export async function waitAllSucceeded(d: ProcessDeployment, ids: readonly string[], timeoutMs = 60_000) {
  await eventually(
    `${ids.length} jobs SUCCEEDED`,
    async () => {
      const { rows } = await d.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
        [ids],
      );
      return Number(rows[0]?.n) === ids.length;
    },
    timeoutMs,
  );
}
