import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { dirs, postgresBase, type StackConfig } from './config.js';
import { ensureDatabases } from './databases.js';
import { ensureJars, jarPaths } from './jars.js';
import { checkPrerequisites } from './prereqs.js';
import { isAlive, pidFileFor, readPid, rssMiB, stopPid, type Spawned } from './proc.js';
import { OPTIONAL_SERVICES, SERVICES, type ServiceDef, type ServiceName } from './services/index.js';
import { waitFor } from './wait.js';

export type Log = (line: string) => void;

export interface ServiceState {
  readonly name: ServiceName;
  readonly healthy: boolean;
  readonly pid: number | undefined;
  readonly managed: boolean;
  readonly rssMiB: number | undefined;
  readonly listens: string;
  readonly action?: 'started' | 'already running';
  readonly seconds?: number;
}

export const logFileFor = (cfg: StackConfig, name: string) => resolve(dirs(cfg).logs, `${name}.log`);
const pidFile = (cfg: StackConfig, name: string) => pidFileFor(dirs(cfg).run, name);

function managedPid(cfg: StackConfig, name: string): number | undefined {
  const pid = readPid(pidFile(cfg, name));
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

/** The optional services this configuration asks for (`--with`, KAIROS_STACK_WITH). */
const optionalOf = (cfg: StackConfig) =>
  OPTIONAL_SERVICES.filter((s) => cfg.optional.some((n) => n === s.name));

/**
 * Starts every service that is not healthy yet (the default ones and the optional ones cfg asks
 * for), each as soon as its dependencies are healthy, and waits for all of them by health check.
 * Idempotent: healthy services are left alone.
 */
export function up(cfg: StackConfig, log: Log): Promise<ServiceState[]> {
  return bringUp(cfg, [...SERVICES, ...optionalOf(cfg)], log);
}

/** Only the optional services cfg asks for (they depend on no other), as `up` would start them. */
export function upOptional(cfg: StackConfig, log: Log): Promise<ServiceState[]> {
  return bringUp(cfg, optionalOf(cfg), log);
}

async function bringUp(cfg: StackConfig, services: readonly ServiceDef[], log: Log): Promise<ServiceState[]> {
  // Only what must start here needs its tools: a service that already answers (under Docker, or
  // from an earlier `up`) is left alone, and its binaries are not looked for.
  const answering = await Promise.all(services.map((s) => s.healthy(cfg)));
  const toStart = services.filter((_, i) => !answering[i]).map((s) => s.name);
  const tools = checkPrerequisites(toStart, log);
  const jvm = toStart.some((n) => n === 'kafka' || n === 'connect' || n === 'registry');
  const jars = jvm ? await ensureJars(cfg, tools, log) : jarPaths(cfg);
  const ready = new Map<ServiceName, Promise<ServiceState>>();

  const bring = async (svc: ServiceDef): Promise<ServiceState> => {
    await Promise.all(svc.dependsOn.map((d) => ready.get(d) ?? Promise.reject(new Error(`no service ${d}`))));
    const t0 = Date.now();
    let action: ServiceState['action'] = 'already running';
    if (!(await svc.healthy(cfg))) {
      let proc: Spawned | undefined;
      if (managedPid(cfg, svc.name) === undefined) {
        action = 'started';
        log(`starting ${svc.name}…`);
        proc = svc.start({
          cfg,
          tools,
          jars,
          logFile: logFileFor(cfg, svc.name),
          pidFile: pidFile(cfg, svc.name),
        });
      }
      await waitFor(svc.name, () => svc.healthy(cfg), {
        timeoutMs: svc.startTimeoutMs,
        ...(proc ? { isDead: () => proc.exited() } : {}),
      });
    }
    if (svc.name === 'postgres') await ensureDatabases(cfg);
    if (action === 'started') await svc.ready?.({ cfg, tools, jars });
    const pid = managedPid(cfg, svc.name);
    return {
      name: svc.name,
      healthy: true,
      pid,
      managed: pid !== undefined,
      rssMiB: pid !== undefined ? rssMiB(pid) : undefined,
      listens: svc.listens(cfg),
      action,
      seconds: (Date.now() - t0) / 1000,
    };
  };

  // Services are in dependency order, so every dependency's promise exists before it is awaited.
  const all = services.map((svc) => {
    const p = bring(svc);
    ready.set(svc.name, p);
    return p;
  });
  const results = await Promise.allSettled(all);
  const failures = results.flatMap((r) =>
    r.status === 'rejected' ? [r.reason instanceof Error ? r.reason.message : String(r.reason)] : [],
  );
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
}

/** The default services, and the optional ones cfg asks for or this stack runs. */
export async function status(cfg: StackConfig): Promise<ServiceState[]> {
  const optional = OPTIONAL_SERVICES.filter(
    (s) => cfg.optional.some((n) => n === s.name) || managedPid(cfg, s.name) !== undefined,
  );
  return Promise.all(
    [...SERVICES, ...optional].map(async (svc) => {
      const pid = managedPid(cfg, svc.name);
      return {
        name: svc.name,
        healthy: await svc.healthy(cfg),
        pid,
        managed: pid !== undefined,
        rssMiB: pid !== undefined ? rssMiB(pid) : undefined,
        listens: svc.listens(cfg),
      };
    }),
  );
}

/**
 * Stops, in reverse start order, every process this stack started (and only those), or only the
 * named services. PostgreSQL gets SIGINT (fast shutdown): SIGTERM would wait for every client.
 */
export async function down(cfg: StackConfig, log: Log, only?: readonly ServiceName[]): Promise<void> {
  for (const svc of [...SERVICES, ...OPTIONAL_SERVICES].reverse()) {
    if (only && !only.includes(svc.name)) continue;
    const result = await stopPid(
      pidFile(cfg, svc.name),
      30_000,
      svc.name === 'postgres' ? 'SIGINT' : 'SIGTERM',
    );
    // An optional service that was never started is not worth a line.
    if (result === 'stopped' || !OPTIONAL_SERVICES.includes(svc)) log(`${svc.name}: ${result}`);
  }
}

/** Stops everything and deletes all data and logs; the jar cache stays. */
export async function reset(cfg: StackConfig, log: Log): Promise<void> {
  await down(cfg, log);
  if (existsSync(cfg.dataDir)) rmSync(cfg.dataDir, { recursive: true, force: true });
  rmSync(postgresBase(cfg), { recursive: true, force: true }); // may live outside dataDir
  log(`deleted ${cfg.dataDir}`);
}
