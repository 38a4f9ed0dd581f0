import { existsSync, readFileSync, rmSync } from 'node:fs';
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
  const jvm = toStart.some((n) => ['kafka', 'connect', 'registry', 'kafka-cluster'].includes(n));
  const jars = jvm ? await ensureJars(cfg, tools, log) : jarPaths(cfg);
  const ready = new Map<ServiceName, Promise<ServiceState>>();

  const bring = async (svc: ServiceDef): Promise<ServiceState> => {
    await Promise.all(svc.dependsOn.map((d) => ready.get(d) ?? Promise.reject(new Error(`no service ${d}`))));
    const t0 = Date.now();
    let action: ServiceState['action'] = 'already running';
    if (!(await svc.healthy(cfg))) {
      if (managedPid(cfg, svc.name) === undefined) {
        action = 'started';
        await startHealthy(cfg, svc, (c) => svc.start({ ...c, tools, jars }), log);
      } else {
        await waitFor(svc.name, () => svc.healthy(cfg), { timeoutMs: svc.startTimeoutMs });
      }
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

/** How many times a service that exits during start-up is started before `up` gives up. */
const START_ATTEMPTS = 2;

/**
 * Starts svc and waits for its health check. A process that exits during start-up is started once
 * more (a JVM that lost a race for a port or a first connection should not fail a whole CI run);
 * the error then quotes the end of its log, so the cause is visible where `up` was run.
 */
async function startHealthy(
  cfg: StackConfig,
  svc: ServiceDef,
  start: (c: { cfg: StackConfig; logFile: string; pidFile: string }) => Spawned,
  log: Log,
): Promise<void> {
  const logFile = logFileFor(cfg, svc.name);
  for (let attempt = 1; ; attempt++) {
    log(`starting ${svc.name}…`);
    const proc = start({ cfg, logFile, pidFile: pidFile(cfg, svc.name) });
    try {
      await waitFor(svc.name, () => svc.healthy(cfg), {
        timeoutMs: svc.startTimeoutMs,
        isDead: () => proc.exited(),
      });
      return;
    } catch (err) {
      const exited = proc.exited() !== undefined;
      const message = `${err instanceof Error ? err.message : String(err)}\n${logTail(logFile)}`;
      if (!exited || attempt >= START_ATTEMPTS) throw new Error(message, { cause: err });
      log(`${message}\n${svc.name} exited during start-up; starting it once more`);
    }
  }
}

/** The last lines of a service's log, indented, for an error message. */
function logTail(file: string, lines = 25): string {
  if (!existsSync(file)) return `  (no log at ${file})`;
  const all = readFileSync(file, 'utf8').trimEnd().split('\n');
  return [
    `  last ${Math.min(lines, all.length)} lines of ${file}:`,
    ...all.slice(-lines).map((l) => `  | ${l}`),
  ].join('\n');
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

/**
 * Crashes one service this stack runs, as a power loss or the OOM killer would: SIGKILL to its
 * whole process group (a JVM and its wrapper; PostgreSQL's postmaster and every backend, so it
 * restarts with crash recovery and no orphan holds its shared memory). Waits until it is gone;
 * `up` starts it again. For chaos tests. Returns the pid killed.
 */
export async function crash(cfg: StackConfig, name: ServiceName): Promise<number> {
  const pid = managedPid(cfg, name);
  if (pid === undefined)
    throw new Error(`${name} is not running under this stack (no live pid in ${pidFile(cfg, name)})`);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    process.kill(pid, 'SIGKILL');
  }
  await waitFor(`${name} to die`, () => Promise.resolve(!isAlive(pid)), { timeoutMs: 10_000 });
  return pid;
}

/** Stops everything and deletes all data and logs; the jar cache stays. */
export async function reset(cfg: StackConfig, log: Log): Promise<void> {
  await down(cfg, log);
  if (existsSync(cfg.dataDir)) rmSync(cfg.dataDir, { recursive: true, force: true });
  rmSync(postgresBase(cfg), { recursive: true, force: true }); // may live outside dataDir
  log(`deleted ${cfg.dataDir}`);
}
