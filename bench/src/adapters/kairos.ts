import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { KairosClient } from '@kairos/client';
import { ProcessDeployment, type DeploymentOptions, type RunningApp } from '@kairos/ops';
import type { Adapter, BenchEnv, BenchJob, EnqueueMode, OnStart } from '../adapter.js';
import { dropKeys } from './kairos-in-process.js';
import { CLASS, jobRequest, kairosWorkerCommand, prefixOf } from './kairos-common.js';

/** A worker service process of the adapter's, and the handler starts it reports. */
interface WorkerChild {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/**
 * Kairos as users deploy it: api, delay tier, tracker and ingest each its own OS process (from
 * their entry points, as `npm start` runs them), jobs created through the HTTP API, handled by a
 * worker service process on the public SDK. Every process is a child of the bench, so its CPU
 * is counted.
 */
export class KairosAdapter implements Adapter {
  readonly name = 'kairos';
  #env: BenchEnv | undefined;
  #deployment: ProcessDeployment | undefined;
  #workers: WorkerChild[] = [];
  /** When profiling: every process's --cpu-prof folder goes under this. */
  #profileDir: string | undefined;

  /** Profile every app and worker process of the next setup into `<dir>/<app>#<n>/`. */
  profileAs(dir: string | undefined): void {
    this.#profileDir = dir;
  }

  get deployment(): ProcessDeployment {
    if (!this.#deployment) throw new Error('kairos adapter not set up');
    return this.#deployment;
  }

  get env(): BenchEnv {
    if (!this.#env) throw new Error('kairos adapter not set up');
    return this.#env;
  }

  /**
   * Starts the deployment: its namespace, then api, delay tier, tracker and ingest. `options`
   * (W12): other resource classes than `default`, environment of every app, their output lines.
   */
  async setup(
    env: BenchEnv,
    options: Partial<Pick<DeploymentOptions, 'resourceClasses' | 'env' | 'onLine'>> = {},
  ): Promise<void> {
    this.#env = env;
    this.#deployment = await ProcessDeployment.start({
      resourceClasses: [CLASS],
      ...options,
      services: env,
      id: env.namespace,
      prefix: prefixOf(env),
      schema: `b_${env.namespace}`,
      apps: ['api', 'delay-tier', 'tracker', 'ingest'],
      ...(this.#profileDir === undefined ? {} : { profileDir: this.#profileDir }),
    });
  }

  async enqueue(jobs: readonly BenchJob[], mode: EnqueueMode): Promise<void> {
    if (mode === 'batch') {
      await this.createJobs(jobs.map(jobRequest));
      return;
    }
    for (const j of jobs) await this.#post('/v1/jobs', jobRequest(j));
  }

  /** Creates jobs as given (any type and class) in one `POST /v1/jobs:batch`. */
  createJobs(requests: readonly object[]): Promise<void> {
    return this.#post('/v1/jobs:batch', { jobs: requests });
  }

  async #post(path: string, body: unknown): Promise<void> {
    const res = await fetch(`${this.deployment.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.deployment.apiKey}` },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }

  /**
   * Produces the jobs as requests to `schedule-requests` (through the producer SDK, `inFlight` at
   * a time) and resolves once the ingest has applied every one (its job row exists).
   */
  async enqueueViaTopic(jobs: readonly BenchJob[], inFlight: number): Promise<void> {
    const client = new KairosClient({
      brokers: this.env.kafkaBrokers.split(','),
      registryUrl: this.env.registryUrl,
      tenant: 'bench',
      topicPrefix: prefixOf(this.env),
    });
    await client.start();
    try {
      let next = 0;
      const send = async () => {
        for (let j = jobs[next++]; j; j = jobs[next++]) {
          await client.schedule({
            type: 'bench',
            resourceClass: CLASS,
            payload: { key: j.key },
            idempotencyKey: j.key,
            ...(j.dueAtMs === null ? {} : { dueAt: j.dueAtMs }),
          });
        }
      };
      await Promise.all(Array.from({ length: inFlight }, send));
    } finally {
      await client.close();
    }
    const keys = jobs.map((j) => j.key);
    await this.#until(`SELECT count(*) AS n FROM jobs WHERE payload->>'key' = ANY($1)`, [keys], keys.length);
  }

  async #until(sql: string, params: unknown[], n: number, timeoutMs = 300_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await this.deployment.pool.query<{ n: string }>(sql, params);
      if (Number(rows[0]?.n) >= n) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  /** Resolves once `n` jobs of the run were dispatched to their task topic (false on timeout). */
  waitDispatched(n: number, timeoutMs: number): Promise<boolean> {
    return this.#until('SELECT count(*) AS n FROM jobs WHERE dispatched_at IS NOT NULL', [], n, timeoutMs);
  }

  async startWorker(concurrency: number, onStart: OnStart): Promise<void> {
    await this.spawnWorker(concurrency, onStart, 0);
  }

  /** Starts a worker service process (one more); resolves once it has joined its group. */
  async spawnWorker(concurrency: number, onStart: OnStart, handlerMs: number): Promise<RunningWorker> {
    const { args, env } = this.workerProcess(concurrency, handlerMs);
    const prof =
      this.#profileDir === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${resolve(this.#profileDir, `worker#${this.#workers.length + 1}`)}`];
    const child = spawn(process.execPath, [...prof, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const w: WorkerChild = { child, exited };
    this.#workers.push(w);
    const errors: string[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => errors.push(line));
    const ready = new Promise<boolean>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line === 'READY') resolve(true);
        const [kind, key, at] = line.split(' ');
        if (kind === 'START' && key) onStart(key, Number(at));
      });
      void exited.then(() => resolve(false));
    });
    if (!(await ready)) throw new Error(`kairos worker did not start: ${errors.slice(-10).join('\n')}`);
    return { pid: child.pid ?? 0, kill: (signal) => signalWorker(w, signal) };
  }

  /** Stops every worker process (SIGTERM: the SDK finishes running tasks and leaves its group). */
  async stopWorker(): Promise<void> {
    await Promise.all(this.#workers.splice(0).map((w) => signalWorker(w, 'SIGTERM')));
  }

  workerProcess(concurrency: number, handlerMs: number): { args: string[]; env: Record<string, string> } {
    return kairosWorkerCommand(this.env, concurrency, handlerMs);
  }

  /** Starts another delay-tier instance (a standby) in the run's deployment. */
  startDelayTier(): Promise<RunningApp> {
    return this.deployment.startApp('delay-tier');
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    await this.#deployment?.stop();
    this.#deployment = undefined;
    // A Redis Cluster's seed list (W11) names a cluster the workload discards whole.
    if (this.#env && !this.#env.redisUrl.includes(','))
      await dropKeys(this.#env.redisUrl, `${prefixOf(this.#env)}*`);
  }
}

export interface RunningWorker {
  readonly pid: number;
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** Signals a worker process and waits for it to exit (SIGKILL after 15 s of a SIGTERM). */
async function signalWorker(w: WorkerChild, signal: NodeJS.Signals): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill(signal);
  const timer = setTimeout(() => w.child.kill('SIGKILL'), 15_000);
  await w.exited;
  clearTimeout(timer);
}
