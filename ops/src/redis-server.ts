import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * A private redis-server process for tests and drills that must starve, flush or restart Redis:
 * the shared one serves every other test and engineer at the same time. Real Redis, from the
 * same Debian package as the stack's.
 */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** A client on this server (the caller quits it). */
  client(): Redis;
  /** SIGKILLs the process (all data gone: it runs without persistence). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Kills it if running. */
  stop(): Promise<void>;
}

/** A binary of the Redis packages on PATH (or where Debian puts it); `hint` says how to get it. */
export function redisBinary(name: 'redis-server' | 'redis-cli', hint: string): string {
  const candidates = [
    ...(process.env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((d) => join(d, name)),
    `/usr/bin/${name}`,
    `/usr/local/bin/${name}`,
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`no ${name} binary found (looked in ${candidates.join(', ')}; ${hint})`);
  return found;
}

/** A port that was free a moment ago (redis-server cannot be given port 0). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}):\n${output()}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const ok = await probe
      .connect()
      .then(() => probe.ping())
      .then(
        () => true,
        () => false,
      );
    probe.disconnect();
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server at ${url} did not answer PING:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a private redis-server (no persistence, noeviction); `args` adds e.g. `--maxmemory 64mb`. */
export async function startRedisServer(args: readonly string[] = []): Promise<RedisServer> {
  let port = await freePort();
  let url = `redis://127.0.0.1:${port}`;
  // Its working directory: nothing is persisted, but Redis must not write into the checkout.
  const dir = mkdtempSync(join(tmpdir(), 'kairos-redis-'));
  let child: ChildProcess | undefined;

  const launch = async () => {
    let output = '';
    const c = spawn(
      redisBinary('redis-server', 'Debian: apt-get install redis-server'),
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
        ...args,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    c.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    c.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    child = c;
    await waitForPing(url, c, () => output);
  };

  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGKILL');
    await exited;
  };

  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      await kill();
      // Most likely the port was taken between the probe and redis-server's bind.
      if (attempt >= 3) throw err;
      port = await freePort();
      url = `redis://127.0.0.1:${port}`;
    }
  }
  return {
    port,
    url,
    client: () => new Redis(url, { maxRetriesPerRequest: 3 }),
    kill,
    restart: async () => {
      await kill();
      await launch();
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
