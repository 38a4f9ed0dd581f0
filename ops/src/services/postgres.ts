import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { dirs, type StackConfig } from '../config.js';
import { spawnDetached } from '../proc.js';
import { serverTlsArgs } from './postgres-tls.js';
import type { ServiceDef } from './types.js';

/** PostgreSQL refuses to run as root; as root we run it as the Debian package's `postgres` user. */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('running as root needs a `postgres` system user (install: apt-get install postgresql)');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A client of the local cluster as its superuser, on the maintenance database. */
export function adminClient(cfg: StackConfig, connectionTimeoutMillis?: number): pg.Client {
  return new pg.Client({
    host: cfg.host,
    port: cfg.ports.postgres,
    user: 'kairos',
    database: 'postgres',
    ...(connectionTimeoutMillis === undefined ? {} : { connectionTimeoutMillis }),
  });
}

export const postgres: ServiceDef = {
  name: 'postgres',
  dependsOn: [],
  startTimeoutMs: 60_000,
  listens: (cfg) => `postgres://kairos@${cfg.host}:${cfg.ports.postgres}/kairos`,
  async healthy(cfg) {
    const client = adminClient(cfg, 1500);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  },
  start({ cfg, tools, logFile, pidFile }) {
    const d = dirs(cfg);
    const user = postgresUser();
    const sockets = d.postgresSockets;
    for (const dir of [resolve(d.postgres, '..'), d.postgres, sockets]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (user) chownSync(dir, user.uid, user.gid);
    }
    if (!existsSync(resolve(d.postgres, 'PG_VERSION'))) {
      // trust on loopback only: a local development cluster with no password to leak.
      const init = spawnSync(
        resolve(tools.pgBin, 'initdb'),
        ['-D', d.postgres, '-U', 'kairos', '--auth=trust', '--encoding=UTF8', '--locale=C'],
        // cwd: the postgres user may not be allowed into the project folder.
        { encoding: 'utf8', cwd: d.postgres, ...(user ?? {}) },
      );
      if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
    }
    return spawnDetached({
      name: 'postgres',
      command: resolve(tools.pgBin, 'postgres'),
      cwd: d.postgres,
      args: [
        '-D',
        d.postgres,
        '-c',
        `listen_addresses=${cfg.host}`,
        '-c',
        `port=${cfg.ports.postgres}`,
        '-c',
        `unix_socket_directories=${sockets}`,
        '-c',
        'wal_level=logical',
        '-c',
        'max_replication_slots=64',
        '-c',
        'max_wal_senders=64',
        '-c',
        'max_connections=300',
        '-c',
        'shared_buffers=256MB',
        ...serverTlsArgs(cfg),
      ],
      logFile,
      pidFile,
      ...(user ?? {}),
    });
  },
};
