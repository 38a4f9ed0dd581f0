import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { Pool } from '@kairos/db';
import { createKafka } from '@kairos/kafka';
import { appEntry, startNodeProcess, stopApps, type AppProcess, type LineSink } from './apps.js';
import { createAdminKey } from './api-keys.js';
import { prepareNamespace, runStops, type NamespaceSpec } from './namespace-setup.js';

/** The Kairos apps a deployment can run, each from its own entry point. */
export type AppName = 'api' | 'delay-tier' | 'tracker' | 'ingest' | 'worker-example';

/** The message each app logs once it serves (its listening line). */
const READY: Record<AppName, string> = {
  api: 'api listening',
  'delay-tier': 'delay tier started',
  tracker: 'tracker started',
  ingest: 'ingest metrics listening',
  'worker-example': 'worker started',
};

export interface DeploymentOptions extends NamespaceSpec {
  /** Apps started by start(), in this order. Default: api, delay-tier, tracker. */
  readonly apps?: readonly AppName[];
  /** KAIROS_LOG_LEVEL of the apps (above info, readiness goes unseen). Default: info. */
  readonly logLevel?: string;
  /** Environment given to every app on top of the namespace's (tuning, timings). */
  readonly env?: Readonly<Record<string, string>>;
  /** Profile every app with `node --cpu-prof` into `<profileDir>/<app>#<n>/`. Default: off. */
  readonly profileDir?: string;
  /** Receives every output line of every app. Default: lines are kept for errors only. */
  readonly onLine?: (app: string, line: string) => void;
  /** How long an app may take to log its ready line, ms. Default: 60,000. */
  readonly readyTimeoutMs?: number;
  /** Run the apps' compiled `dist/main.js` on plain Node (after `npm run build`). Default: the sources. */
  readonly compiled?: boolean;
}

/** One running app of a deployment. */
export interface RunningApp extends AppProcess {
  readonly kind: AppName | 'worker';
  /** KAIROS_INSTANCE_ID: the delay tier's owner name in partition_epochs. */
  readonly instanceId: string;
}

const ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * Kairos as users run it, in a namespace of shared services: every app its own OS process
 * started from its entry point (as `npm start` does), configured only through the environment.
 * Tests and benchmarks use it to SIGKILL or SIGSTOP a real app and to measure every process.
 * `stop()` ends every app still running and removes what the namespace set up (not its data).
 */
export class ProcessDeployment {
  readonly #o: DeploymentOptions;
  readonly #stops: (() => Promise<void>)[] = [];
  readonly #apps: RunningApp[] = [];
  /** A pool on the namespace's schema, for checks (the apps have their own). */
  pool!: Pool;
  /** The API's base URL once an api app is ready ('' before); a restarted API's once the first is gone. */
  apiUrl = '';
  /** The API's Prometheus endpoint base URL (`<url>/metrics`), like apiUrl. */
  apiMetricsUrl = '';
  /** Each app's operations port (/metrics, /healthz, /readyz) by instance id, as it logged it (`metricsUrl`). */
  readonly opsUrls = new Map<string, string>();
  /** An admin key of every tenant for this namespace's API (`Authorization: Bearer …`). */
  apiKey = '';

  private constructor(o: DeploymentOptions) {
    this.#o = o;
  }

  static async start(o: DeploymentOptions): Promise<ProcessDeployment> {
    const d = new ProcessDeployment(o);
    try {
      const kafka = createKafka({ brokers: o.services.kafkaBrokers.split(','), clientId: `deploy-${o.id}` });
      d.pool = await prepareNamespace(o, kafka, d.#stops, 4);
      d.apiKey = await createAdminKey(d.pool, 'deployment');
      d.#stops.push(() => stopApps(d.#apps, 10_000));
      await Promise.all((o.apps ?? ['api', 'delay-tier', 'tracker']).map((a) => d.startApp(a)));
    } catch (err) {
      await d.stop().catch(() => undefined);
      throw err;
    }
    return d;
  }

  /** The environment of this namespace's apps: the services, the prefixes, the schema. */
  env(): Record<string, string> {
    const { services, prefix, schema, resourceClasses } = this.#o;
    return {
      KAIROS_PG_URL: services.pgUrl,
      KAIROS_REDIS_URL: services.redisUrl,
      KAIROS_KAFKA_BROKERS: services.kafkaBrokers,
      KAIROS_REGISTRY_URL: services.registryUrl,
      KAIROS_JOB_EVENT_PARTITIONS: String(services.jobEventPartitions),
      KAIROS_DB_SCHEMA: schema,
      KAIROS_TOPIC_PREFIX: prefix,
      KAIROS_REDIS_KEY_PREFIX: prefix,
      KAIROS_RESOURCE_CLASSES: resourceClasses.join(','),
      // info at least: each app says at info level when it serves (see READY).
      KAIROS_LOG_LEVEL: this.#o.logLevel ?? 'info',
      // Several deployments share one machine: every listener on a free port.
      KAIROS_API_PORT: '0',
      KAIROS_API_METRICS_PORT: '0',
      KAIROS_DELAY_TIER_ADMIN_PORT: '0',
      KAIROS_TRACKER_METRICS_PORT: '0',
      KAIROS_INGEST_METRICS_PORT: '0',
      ...this.#o.env,
    };
  }

  /** Starts one more app (a standby delay tier, a second tracker…) and waits until it serves. */
  startApp(kind: AppName, env: Readonly<Record<string, string>> = {}): Promise<RunningApp> {
    return this.#launch(kind, appEntry(ROOT, kind, this.#o.compiled), READY[kind], env);
  }

  /**
   * Starts a worker service of the caller's (a script on the public worker SDK) with this
   * namespace's environment; ready once it prints `readyLine` (a plain line or a JSON `msg`).
   */
  startWorker(
    script: string,
    readyLine: string,
    env: Readonly<Record<string, string>> = {},
  ): Promise<RunningApp> {
    return this.#launch('worker', script, readyLine, env);
  }

  async #launch(
    kind: AppName | 'worker',
    script: string,
    readyLine: string,
    env: Readonly<Record<string, string>>,
  ): Promise<RunningApp> {
    const instanceId = `${kind}-${randomBytes(3).toString('hex')}`;
    const name = `${kind}#${this.#apps.filter((a) => a.kind === kind).length + 1}`;
    const recent: string[] = [];
    let onReady: () => void = () => undefined;
    const ready = new Promise<boolean>((r) => (onReady = () => r(true)));
    const sink: LineSink = (line) => {
      recent.push(line);
      if (recent.length > 50) recent.shift();
      this.#o.onLine?.(name, line);
      const { metricsUrl } = (parseLine(line) ?? {}) as { metricsUrl?: unknown };
      if (typeof metricsUrl === 'string') this.opsUrls.set(instanceId, metricsUrl);
      if (line === readyLine || lineMessage(line) === readyLine) {
        if (kind === 'api') this.#noteApiUrl(line);
        onReady();
      }
    };
    const proc = startNodeProcess(
      ROOT,
      name,
      script,
      { ...process.env, ...this.env(), KAIROS_INSTANCE_ID: instanceId, ...env },
      sink,
      this.#o.profileDir === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${resolve(this.#o.profileDir, name)}`],
    );
    const app: RunningApp = { ...proc, kind, instanceId };
    this.#apps.push(app);
    const failed = new Promise<boolean>((r) => {
      proc.child.once('exit', () => r(false));
      setTimeout(() => r(false), this.#o.readyTimeoutMs ?? 60_000).unref();
    });
    if (!(await Promise.race([ready, failed]))) {
      throw new Error(`${name} did not start; its last lines:\n${recent.slice(-20).join('\n')}`);
    }
    return app;
  }

  #noteApiUrl(line: string): void {
    const { url, metricsUrl } = (parseLine(line) ?? {}) as { url?: unknown; metricsUrl?: unknown };
    // The first API, or a new one when every earlier one has exited (a test killed it).
    if (typeof url === 'string' && (this.apiUrl === '' || this.apps('api').length <= 1)) {
      this.apiUrl = url;
      if (typeof metricsUrl === 'string') this.apiMetricsUrl = metricsUrl;
    }
  }

  /** Running (not exited) apps, optionally of one kind. */
  apps(kind?: AppName | 'worker'): RunningApp[] {
    return this.#apps.filter(
      (a) =>
        (kind === undefined || a.kind === kind) && a.child.exitCode === null && a.child.signalCode === null,
    );
  }

  /** Process ids of the running apps (CPU accounting). */
  pids(): number[] {
    return this.apps().flatMap((a) => (a.child.pid === undefined ? [] : [a.child.pid]));
  }

  /** Sends a signal to one app; for SIGKILL, resolves once the process is gone. */
  async kill(app: RunningApp, signal: NodeJS.Signals): Promise<void> {
    const gone = new Promise<void>((r) => {
      if (app.child.exitCode !== null || app.child.signalCode !== null) r();
      else app.child.once('exit', () => r());
    });
    app.child.kill(signal);
    if (signal === 'SIGKILL') await gone;
  }

  /** Stops every app (SIGTERM, then SIGKILL), then undoes the namespace's setup; newest first. */
  stop(): Promise<void> {
    return runStops(this.#stops);
  }
}

function parseLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function lineMessage(line: string): unknown {
  return parseLine(line)?.msg;
}
