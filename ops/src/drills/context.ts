import { resolve } from 'node:path';
import { fencedEffectsTableSql } from '@kairos/worker-sdk';
import { ProcessDeployment, type AppName, type RunningApp } from '../deployment.js';
import type { NamespaceSpec } from '../namespace-setup.js';
import type { JobRow } from './job-checks.js';
import type { Progress } from './progress.js';
import type { TimelineEvent } from './record.js';
import { seededRandom } from './random.js';

const WORKER_SCRIPT = resolve(import.meta.dirname, 'drill-worker.ts');

/** Listens to every output line of the drill's apps (`app` is e.g. `delay-tier#1`). */
export type LineListener = (app: string, line: string, atMs: number) => void;

/**
 * What a drill works with: its namespace's deployment of real processes, a seeded random
 * source, a timeline of marked moments, the live progress line and waits with deadlines.
 */
export class DrillContext {
  readonly t0 = Date.now();
  readonly timeline: TimelineEvent[] = [];
  readonly random: () => number;
  /** The apps' error and fatal log lines (the first 100): the record's clue when a drill fails. */
  readonly errors: { app: string; atMs: number; line: string }[] = [];
  readonly #listeners: LineListener[] = [];
  /** What the drill started besides the apps (a downstream, a Redis of its own), undone last. */
  readonly #deferred: (() => Promise<void> | void)[] = [];
  #deployment: ProcessDeployment | undefined;
  #stopping = false;

  constructor(
    readonly ns: NamespaceSpec,
    readonly seed: number,
    readonly progress: Progress,
    /** Where the apps' CPU profiles go, one directory per app (none when undefined). */
    readonly profileDir?: string,
  ) {
    this.random = seededRandom(seed);
  }

  /** Milliseconds since the drill started. */
  now(): number {
    return Date.now() - this.t0;
  }

  /** Notes a moment on the timeline (and on the progress line). */
  mark(event: string, detail?: Record<string, unknown>): number {
    const atMs = this.now();
    this.timeline.push({ atMs, event, ...(detail ? { detail } : {}) });
    this.progress.phase(event);
    return atMs;
  }

  onLine(listener: LineListener): void {
    this.#listeners.push(listener);
  }

  /** Starts the namespace's apps as processes (timings through `env`), with the drills' effect tables. */
  async deploy(apps: readonly AppName[], env: Readonly<Record<string, string>>): Promise<ProcessDeployment> {
    this.#deployment = await ProcessDeployment.start({
      ...this.ns,
      apps,
      ...(this.profileDir === undefined ? {} : { profileDir: this.profileDir }),
      // The canary would add jobs of its own to the namespace; the drills probe with their own jobs.
      env: { KAIROS_CANARY_INTERVAL_MS: '0', ...env },
      onLine: (app, line) => {
        const at = this.now();
        if (/"level":(50|60)/.test(line) && this.errors.length < 100)
          this.errors.push({ app, atMs: at, line });
        for (const l of this.#listeners) l(app, line, at);
      },
    });
    await this.#deployment.pool.query(
      'CREATE TABLE drill_effects (job_id uuid NOT NULL, fence int NOT NULL, worker text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
    );
    await this.#deployment.pool.query(fencedEffectsTableSql());
    return this.#deployment;
  }

  get deployment(): ProcessDeployment {
    if (!this.#deployment) throw new Error('deploy() first');
    return this.#deployment;
  }

  /** A drill worker process (drill-worker.ts) on every class of the namespace. */
  async startWorker(env: Readonly<Record<string, string>> = {}): Promise<RunningApp> {
    const app = await this.deployment.startWorker(WORKER_SCRIPT, 'READY', env);
    // A worker that leaves on its own is part of the story (a zombie's exit, or why jobs stalled).
    app.child.once('exit', (code, signal) => {
      if (!this.#stopping) this.mark('worker exited', { app: app.name, code, signal });
    });
    return app;
  }

  /** Creates jobs through the deployment's HTTP API, 500 per request; returns their ids in order. */
  async createJobs(jobs: readonly Record<string, unknown>[]): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < jobs.length; i += 500) {
      const res = await fetch(`${this.deployment.apiUrl}/v1/jobs:batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.deployment.apiKey}` },
        body: JSON.stringify({ jobs: jobs.slice(i, i + 500) }),
      });
      if (res.status !== 201) throw new Error(`creating jobs: HTTP ${res.status} ${await res.text()}`);
      ids.push(...((await res.json()) as { jobs: { id: string }[] }).jobs.map((j) => j.id));
    }
    return ids;
  }

  /** The jobs as PostgreSQL has them now. */
  async jobRows(ids: readonly string[]): Promise<JobRow[]> {
    const { rows } = await this.deployment.pool.query<{
      id: string;
      state: string;
      due_at: Date;
      dispatched_at: Date | null;
      attempt: number;
    }>('SELECT id, state, due_at, dispatched_at, attempt FROM jobs WHERE id = ANY($1::uuid[])', [ids]);
    return rows.map((r) => ({
      id: r.id,
      state: r.state,
      dueAtMs: r.due_at.getTime(),
      dispatchedAtMs: r.dispatched_at?.getTime(),
      attempt: r.attempt,
    }));
  }

  /** How many jobs of `ids` are SUCCEEDED. */
  async succeeded(ids: readonly string[]): Promise<number> {
    const { rows } = await this.deployment.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
      [ids],
    );
    return rows[0]?.n ?? 0;
  }

  /** Waits (showing progress) until every job of `ids` SUCCEEDED; false if some had not by `timeoutMs`. */
  settle(ids: readonly string[], timeoutMs: number): Promise<boolean> {
    return this.until(
      async () => {
        const done = await this.succeeded(ids);
        this.progress.update(done, ids.length);
        return done === ids.length;
      },
      timeoutMs,
      500,
    );
  }

  /** Job id → how many times its effect was applied (rows in drill_effects). */
  async effects(): Promise<Map<string, number>> {
    const { rows } = await this.deployment.pool.query<{ job_id: string; n: number }>(
      'SELECT job_id, count(*)::int AS n FROM drill_effects GROUP BY job_id',
    );
    return new Map(rows.map((r) => [r.job_id, r.n]));
  }

  /** Polls `check` every `everyMs` until true; false once `timeoutMs` has passed. */
  async until(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, everyMs));
    }
    return true;
  }

  /** Like until(), but a timeout is an error naming what never happened. */
  async waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
    if (!(await this.until(check, timeoutMs))) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
  }

  /** Delay-tier instance id → the partitions whose current epoch it holds. */
  async owners(): Promise<Map<string, number[]>> {
    const { rows } = await this.deployment.pool.query<{ owner: string; partition: number }>(
      'SELECT owner, partition FROM partition_epochs ORDER BY partition',
    );
    const out = new Map<string, number[]>();
    for (const r of rows) out.set(r.owner, [...(out.get(r.owner) ?? []), r.partition]);
    return out;
  }

  /** Runs `undo` when the drill ends, after its apps have stopped (newest first). */
  defer(undo: () => Promise<void> | void): void {
    this.#deferred.push(undo);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    try {
      await this.#deployment?.stop();
    } finally {
      for (const undo of this.#deferred.reverse()) await Promise.resolve(undo()).catch(() => undefined);
    }
  }
}

/** Each delay tier's admin URL (its /metrics too) by app name, from its ready line; call before deploy(). */
export function tierAdminUrls(ctx: DrillContext): Map<string, string> {
  const urls = new Map<string, string>();
  ctx.onLine((app, line) => {
    const m = /"adminUrl":"([^"]+)"/.exec(line);
    if (app.startsWith('delay-tier') && m?.[1]) urls.set(app, m[1]);
  });
  return urls;
}
