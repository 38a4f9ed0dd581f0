import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A detached service process: its output goes to a log file, its pid to a pid file. */
export interface Spawned {
  readonly pid: number;
  /** A reason if the process has exited, else undefined. */
  exited(): string | undefined;
}

export interface SpawnSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly pidFile: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly uid?: number;
  readonly gid?: number;
}

export function spawnDetached(spec: SpawnSpec): Spawned {
  mkdirSync(dirname(spec.logFile), { recursive: true });
  mkdirSync(dirname(spec.pidFile), { recursive: true });
  const fd = openSync(spec.logFile, 'a');
  const child = spawn(spec.command, [...spec.args], {
    cwd: spec.cwd,
    env: spec.env ?? process.env,
    detached: true,
    stdio: ['ignore', fd, fd],
    ...(spec.uid !== undefined ? { uid: spec.uid } : {}),
    ...(spec.gid !== undefined ? { gid: spec.gid } : {}),
  });
  closeSync(fd);
  let exitReason: string | undefined;
  child.on('exit', (code, signal) => {
    exitReason = `exit code ${code ?? 'none'}${signal ? `, signal ${signal}` : ''}; see ${spec.logFile}`;
  });
  child.on('error', (err) => {
    exitReason = `${err.message}; see ${spec.logFile}`;
  });
  if (child.pid === undefined) throw new Error(`could not start ${spec.name} (${spec.command})`);
  writeFileSync(spec.pidFile, String(child.pid));
  child.unref();
  return { pid: child.pid, exited: () => exitReason };
}

export function readPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM the process group, wait for it to exit, SIGKILL after graceMs. */
export async function stopPid(
  pidFile: string,
  graceMs: number,
  stopSignal: NodeJS.Signals = 'SIGTERM',
): Promise<'stopped' | 'not running'> {
  const pid = readPid(pidFile);
  if (pid === undefined || !isAlive(pid)) {
    rmSync(pidFile, { force: true });
    return 'not running';
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig); // the whole group: JVM wrappers and postgres children too
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  signal(stopSignal);
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) signal('SIGKILL');
  while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  rmSync(pidFile, { force: true });
  return 'stopped';
}

/**
 * Resident set size of a service in MiB, for `status`: every process of the session its detached
 * start made (a wrapper script's JVMs are its grandchildren).
 */
export function rssMiB(pid: number): number | undefined {
  const out = spawnSync('ps', ['-o', 'rss=', '-g', String(pid)], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const kib = out.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isFinite(n) && n > 0)
    .reduce((a, b) => a + b, 0);
  return Math.round(kib / 1024);
}

export function pidFileFor(runDir: string, name: string): string {
  return resolve(runDir, `${name}.pid`);
}
