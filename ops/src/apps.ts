import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

export interface AppProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the app logs a line whose message is `msg` (false after timeoutMs). */
  logged(msg: string, timeoutMs: number): Promise<boolean>;
}

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m', '\x1b[34m'];
const RESET = '\x1b[0m';
const LEVELS: Record<string, string> = {
  '10': 'trace',
  '20': 'debug',
  '30': 'info',
  '40': 'warn',
  '50': 'error',
  '60': 'fatal',
};

/** One readable line from a pino (or any JSON) log line; other lines pass through. */
export function formatLogLine(line: string): string {
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, msg, time, component: _c, pid: _p, hostname: _h, instance: _i, ...rest } = obj;
  const lvl = LEVELS[JSON.stringify(level)] ?? (typeof level === 'string' ? level : 'info');
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const prefix = lvl === 'info' ? '' : `${lvl.toUpperCase()} `;
  void time;
  return `${prefix}${typeof msg === 'string' ? msg : ''}${fields ? `  ${fields}` : ''}`;
}

/** Where an app's output lines go: printed with a coloured tag (npm start), or to a caller. */
export type LineSink = (line: string) => void;

/** A sink that prints each line, made readable, behind the app's coloured name. */
export function printedLines(name: string, index: number): LineSink {
  const tag = `${COLORS[index % COLORS.length] ?? ''}[${name}]${RESET}`;
  return (line) => console.log(`${tag} ${formatLogLine(line)}`);
}

/**
 * Starts a Node entry point (an app's `src/main.ts`, or any script) on this Node with tsx, as its
 * own OS process; compiled JavaScript (`.js`) runs on plain Node, as in production. `logged(msg)`
 * resolves once it logs a JSON line whose message is `msg`.
 */
export function startNodeProcess(
  root: string,
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  sink: LineSink,
  nodeArgs: readonly string[] = [],
): AppProcess {
  const child = spawn(
    process.execPath,
    script.endsWith('.js')
      ? [...nodeArgs, script]
      : [...nodeArgs, '--conditions=kairos-source', '--import', 'tsx', script],
    {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const seen = new Set<string>();
  const waiters = new Map<string, (() => void)[]>();
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (line) => {
      sink(line);
      const msg = messageOf(line);
      if (msg === undefined) return;
      seen.add(msg);
      for (const done of waiters.get(msg) ?? []) done();
      waiters.delete(msg);
    });
  }
  const logged = (msg: string, timeoutMs: number) =>
    seen.has(msg)
      ? Promise.resolve(true)
      : new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), timeoutMs);
          waiters.set(msg, [
            ...(waiters.get(msg) ?? []),
            () => {
              clearTimeout(timer);
              resolve(true);
            },
          ]);
        });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) sink(`exited with code ${code}`);
  });
  return { name, child, logged };
}

/** Starts an app's entry point on this Node with tsx, its output prefixed and made readable. */
export function startApp(root: string, name: string, env: NodeJS.ProcessEnv, index: number): AppProcess {
  return startNodeProcess(root, name, appEntry(root, name), env, printedLines(name, index));
}

/** The entry point of an app under apps/. */
/** An app's entry point: its TypeScript source (run through tsx), or its compiled `dist/main.js`. */
export function appEntry(root: string, name: string, compiled = false): string {
  return compiled
    ? resolve(root, 'apps', name, 'dist', 'main.js')
    : resolve(root, 'apps', name, 'src', 'main.ts');
}

function messageOf(line: string): string | undefined {
  try {
    const msg = (JSON.parse(line) as { msg?: unknown }).msg;
    return typeof msg === 'string' ? msg : undefined;
  } catch {
    return undefined;
  }
}

export async function stopApps(apps: readonly AppProcess[], graceMs = 15_000): Promise<void> {
  await Promise.all(
    apps.map(
      ({ child }) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            done();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
