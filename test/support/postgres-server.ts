import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * A private PostgreSQL cluster for tests that must stop the database: the shared one serves every
 * other test at the same time. Real PostgreSQL from the same Debian binaries the stack uses, its
 * cluster in a temporary folder, run as the `postgres` user when we are root (as ops/ does).
 */
export interface PostgresServer {
  readonly port: number;
  /** The `kairos` database, user `kairos`, trust on loopback. */
  readonly url: string;
  /** `pg_ctl stop -m fast`: connections are cut, the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops it if running and deletes its folder. */
  destroy(): Promise<void>;
}

/** PostgreSQL server binaries: on PATH, else Debian's /usr/lib/postgresql/<version>/bin (newest). */
function pgBin(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb'))) return dir;
  }
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .map(Number)
        .filter((v) => v >= 15)
        .sort((a, b) => b - a)
    : [];
  for (const v of versions) {
    const bin = resolve(base, String(v), 'bin');
    if (existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'initdb'))) return bin;
  }
  throw new Error('no PostgreSQL 15+ server binaries (pg_ctl, initdb) found; apt-get install postgresql');
}

/** PostgreSQL refuses to run as root: then it runs as the Debian package's `postgres` user. */
async function runAs(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  return { uid, gid };
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = pgBin();
  const user = await runAs();
  const dir = mkdtempSync(join(tmpdir(), 'kairos-test-pg-'));
  const data = join(dir, 'data');
  const sockets = join(dir, 'socket');
  const log = join(dir, 'postgres.log');
  for (const d of [dir, data, sockets]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    if (user) chownSync(d, user.uid, user.gid);
  }
  // cwd: the postgres user may not be allowed into the current folder.
  const as = { cwd: dir, ...(user ?? {}) };
  await run(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'kairos', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    as,
  );
  let port = await freePort();
  const pgCtl = (...args: string[]) => run(join(bin, 'pg_ctl'), ['-D', data, ...args], as);
  const start = async () => {
    try {
      await pgCtl(
        'start',
        '-w',
        '-t',
        '60',
        '-l',
        log,
        '-o',
        // No durability needed: the test restarts it cleanly, never after a crash.
        `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${sockets} ` +
          '-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60',
      );
    } catch (err) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
      throw new Error(`pg_ctl start failed: ${(err as Error).message}\n${tail}`, { cause: err });
    }
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await start();
      break;
    } catch (err) {
      // Most likely the port was taken between the probe and the server's bind.
      if (attempt >= 3) throw err;
      port = await freePort();
    }
  }
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'kairos', database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE kairos');
  await admin.end();
  const running = () => existsSync(join(data, 'postmaster.pid'));
  return {
    port,
    url: `postgres://kairos@127.0.0.1:${port}/kairos`,
    stop: async () => {
      if (running()) await pgCtl('stop', '-m', 'fast', '-w', '-t', '60');
    },
    start,
    destroy: async () => {
      if (running()) await pgCtl('stop', '-m', 'immediate', '-w', '-t', '60').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
