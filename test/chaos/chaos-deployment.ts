import { resolve } from 'node:path';
import type { ProcessDeployment, RunningApp } from '@kairos/ops';
import { fencedEffectsTableSql } from '@kairos/worker-sdk';
import { startDeployment } from '../support/deployment.js';
import type { Namespace } from '../support/namespace.js';
import { eventually, RESOURCE_CLASSES } from '../support/pipeline.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import type { HandlerCall } from './history.js';

const WORKER = resolve(import.meta.dirname, 'chaos-worker.ts');

/** How often the tracker sends a canary per class in the chaos suite, ms. */
export const CANARY_INTERVAL_MS = 2000;

/** The chaos suite's worker services: disjoint job types on the same classes. */
export const CHAOS_SERVICES = [
  { service: 'chaos-a', types: ['chaos.work'] },
  { service: 'chaos-b', types: ['chaos.mail'] },
] as const;

/** A worker process's service, types and consumer group. */
export interface WorkerRole {
  readonly service: string;
  readonly types: readonly string[];
  readonly groupId: string;
}

/**
 * Worker processes kept at a count per role, as a supervisor (Kubernetes, systemd) would: one
 * that exits (killed, or a zombie that shut itself down) is replaced by one of the same role.
 * Tracks each worker's running jobs from its START/DONE lines, so a fault can pick the worker
 * with the most work in flight, and records every handler call.
 */
export class WorkerPool {
  readonly inFlight = new Map<string, Set<string>>();
  readonly calls: HandlerCall[] = [];
  readonly #d: ProcessDeployment;
  readonly #services: object;
  readonly #slots: { readonly role: WorkerRole; app?: RunningApp }[];
  #timer: NodeJS.Timeout | undefined;
  #starting: Promise<unknown> | undefined;

  /** `services`: where the workers find the namespace (WorkerServices). */
  constructor(d: ProcessDeployment, services: object, roles: readonly WorkerRole[]) {
    this.#d = d;
    this.#services = services;
    this.#slots = roles.map((role) => ({ role }));
  }

  onLine(app: string, line: string): void {
    const [kind, job, fence, at] = line.split(' ');
    if (!job || (kind !== 'START' && kind !== 'DONE')) return;
    const set = this.inFlight.get(app) ?? new Set<string>();
    if (kind === 'START') {
      set.add(job);
      this.calls.push({ jobId: job, fence: Number(fence), atMs: Number(at) });
    } else set.delete(job);
    this.inFlight.set(app, set);
  }

  /** Starts the workers and keeps their count until stop(). */
  async start(): Promise<void> {
    await Promise.all(this.#slots.map(async (s) => (s.app = await this.startWorker(s.role))));
    this.#timer = setInterval(() => {
      const empty = this.#slots.find((s) => !s.app || !this.#d.apps('worker').includes(s.app));
      if (this.#starting || !empty) return;
      this.#starting = this.startWorker(empty.role)
        .then((app) => (empty.app = app))
        .catch((err: unknown) => console.warn(`[chaos] a worker did not start: ${String(err)}`))
        .finally(() => (this.#starting = undefined));
    }, 250);
  }

  /** A worker process of `role` (not replaced if it exits, unless it is one of the pool's). */
  startWorker(role: WorkerRole): Promise<RunningApp> {
    const env = JSON.stringify({ ...this.#services, ...role });
    return this.#d.startWorker(WORKER, 'READY', { CHAOS_WORKER_ENV: env });
  }

  /** Running workers, the one with the most jobs in flight first. */
  busiest(): RunningApp[] {
    const load = (w: RunningApp) => this.inFlight.get(w.name)?.size ?? 0;
    return this.#d.apps('worker').sort((a, b) => load(b) - load(a));
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#starting;
  }
}

/** How many of each app the chaos deployment runs, and over how many job-events partitions. */
export interface Topology {
  readonly delayTiers: number;
  readonly trackers: number;
  readonly ingests: number;
  /** Worker processes, each on every class, of the services in turn (CHAOS_SERVICES). */
  readonly workers: number;
  /** Partitions of kairos.job-events. Default: the namespace's. */
  readonly partitions?: number;
}

/** The default suite's: an owner and a standby, one tracker and ingest, two workers of each service. */
export const CHAOS_TOPOLOGY: Topology = { delayTiers: 2, trackers: 1, ingests: 1, workers: 4 };

export interface ChaosDeployment {
  readonly d: ProcessDeployment;
  /** The delay tiers' warnings and errors (ownership changes, stale epochs, rebuilds), for a failure's diagnosis. */
  readonly tierNotes: string[];
  readonly redis: RedisServer;
  readonly workers: WorkerPool;
  readonly partitions: number;
}

/**
 * The chaos suite's deployment: every app its own OS process (api, and by default two delay
 * tiers, tracker, ingest, four workers on every class, two of each of two services with disjoint
 * job types: `topology`) on a private redis-server the suite may kill or flush,
 * and the shared Kafka, Connect and PostgreSQL in the test's namespace. The canary runs every
 * CANARY_INTERVAL_MS. Everything is stopped on the namespace's cleanup.
 */
export async function startChaosDeployment(
  ns: Namespace,
  topology: Topology = CHAOS_TOPOLOGY,
): Promise<ChaosDeployment> {
  const redis = await startRedisServer();
  ns.defer(() => redis.stop());
  // The pool needs the deployment, the deployment's line sink the pool.
  const ref: { workers?: WorkerPool } = {};
  const tierNotes: string[] = [];
  const times = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);
  const partitions = topology.partitions ?? ns.services.jobEventPartitions;
  const d = await startDeployment(ns, {
    apps: [
      'api',
      ...times(topology.delayTiers, 'delay-tier' as const),
      ...times(topology.trackers, 'tracker' as const),
      ...times(topology.ingests, 'ingest' as const),
    ],
    services: { jobEventPartitions: partitions },
    env: { KAIROS_REDIS_URL: redis.url, KAIROS_CANARY_INTERVAL_MS: String(CANARY_INTERVAL_MS) },
    onLine: (app, line) => {
      ref.workers?.onLine(app, line);
      if (app.startsWith('delay-tier') && /"level":(40|50|60)/.test(line)) tierNotes.push(`[${app}] ${line}`);
    },
  });
  await d.pool.query(fencedEffectsTableSql());
  await d.pool.query(
    `CREATE TABLE chaos_effects (job_id uuid NOT NULL, fence bigint NOT NULL, worker text NOT NULL,
       at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  );
  const services = {
    kafkaBrokers: ns.services.kafkaBrokers,
    registryUrl: ns.services.registryUrl,
    redisUrl: redis.url,
    pgUrl: ns.services.pgUrl,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
  };
  const roles = Array.from({ length: topology.workers }, (_, i) => {
    const s = CHAOS_SERVICES[i % CHAOS_SERVICES.length] ?? CHAOS_SERVICES[0];
    return { ...s, groupId: `${ns.prefix}chaos-${s.service}` };
  });
  const workers = new WorkerPool(d, services, roles);
  ref.workers = workers;
  ns.defer(() => workers.stop());
  await workers.start();
  await eventually(
    'every partition owned',
    async () => (await owners(d)).size > 0 && (await ownedCount(d)) === partitions,
    120_000,
  );
  return { d, tierNotes, redis, workers, partitions };
}

/** Delay-tier instance id -> the partitions whose current epoch it holds. */
export async function owners(d: ProcessDeployment): Promise<Map<string, number[]>> {
  const { rows } = await d.pool.query<{ owner: string; partition: number }>(
    'SELECT owner, partition FROM partition_epochs ORDER BY partition',
  );
  const out = new Map<string, number[]>();
  for (const r of rows) out.set(r.owner, [...(out.get(r.owner) ?? []), r.partition]);
  return out;
}

/** Partitions whose epoch a running delay tier holds. */
export async function ownedCount(d: ProcessDeployment): Promise<number> {
  const running = new Set(d.apps('delay-tier').map((t) => t.instanceId));
  return [...(await owners(d))].filter(([o]) => running.has(o)).reduce((n, [, ps]) => n + ps.length, 0);
}

/** What a run that left jobs open needs for its diagnosis: where they are, who owns what. */
export async function diagnose(cd: ChaosDeployment): Promise<string> {
  const { d } = cd;
  const open = await d.pool.query<{ shard: number; state: string; n: number }>(
    `SELECT shard, state, count(*)::int AS n FROM jobs WHERE tenant_id = 'acme'
       AND state NOT IN ('SUCCEEDED','FAILED','CANCELLED','EXPIRED','SKIPPED') GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const epochs = await d.pool.query<{ partition: number; epoch: string; owner: string }>(
    'SELECT partition, epoch, owner FROM partition_epochs ORDER BY partition',
  );
  const tiers = await Promise.all(
    d.apps('delay-tier').map(async (t) => {
      const url = d.opsUrls.get(t.instanceId);
      if (!url) return `${t.name} ${t.instanceId}: no ops port`;
      const res = await fetch(`${new URL(url).origin}/admin/status`, {
        headers: { authorization: `Bearer ${d.apiKey}` },
      }).catch((err: unknown) => String(err));
      return `${t.name} ${t.instanceId}: ${typeof res === 'string' ? res : await res.text()}`;
    }),
  );
  return [
    `open jobs (shard state count): ${open.rows.map((r) => `${r.shard} ${r.state} ${r.n}`).join('; ')}`,
    `partition_epochs: ${epochs.rows.map((r) => `${r.partition}:${r.epoch}@${r.owner}`).join(' ')}`,
    ...tiers,
    ...cd.tierNotes.slice(-60),
  ].join('\n');
}
