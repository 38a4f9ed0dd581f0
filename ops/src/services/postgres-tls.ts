import { chmodSync, chownSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type pg from 'pg';
import { dirs, postgresBase, type StackConfig } from '../config.js';
import { waitFor } from '../wait.js';
import { issueCertificate } from './local-ca.js';
import { adminClient, postgresUser } from './postgres.js';

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Where this stack keeps the server's key and certificate (they may not exist yet). */
export function serverTlsFiles(cfg: StackConfig): { keyFile: string; certFile: string } {
  const outDir = resolve(postgresBase(cfg), 'tls');
  return { keyFile: resolve(outDir, 'server-key.pem'), certFile: resolve(outDir, 'server-cert.pem') };
}

/**
 * The server's TLS options for its command line once its certificate exists. They override
 * `postgresql.auto.conf`, whose ALTER SYSTEM paths name the checkout that first set them: a data
 * folder shared with another checkout (a worktree) that has since gone would not start otherwise.
 */
export function serverTlsArgs(cfg: StackConfig): string[] {
  const { keyFile, certFile } = serverTlsFiles(cfg);
  if (!existsSync(certFile) || !existsSync(keyFile)) return [];
  return ['-c', 'ssl=on', '-c', `ssl_cert_file=${certFile}`, '-c', `ssl_key_file=${keyFile}`];
}

/** The server's key and certificate, signed by the stack's CA, readable only by PostgreSQL. */
function serverCertificate(cfg: StackConfig): { keyFile: string; certFile: string } {
  const files = serverTlsFiles(cfg);
  const outDir = resolve(files.certFile, '..');
  if (existsSync(files.certFile)) return files;
  issueCertificate({ caDir: dirs(cfg).ca, outDir, name: 'server', host: cfg.host });
  // PostgreSQL refuses a key that others can read.
  chmodSync(files.keyFile, 0o600);
  const user = postgresUser();
  if (user) for (const f of [outDir, files.keyFile, files.certFile]) chownSync(f, user.uid, user.gid);
  return files;
}

async function sslOn(cfg: StackConfig): Promise<boolean> {
  const client = adminClient(cfg);
  await client.connect();
  try {
    return (await client.query<{ ssl: string }>('SHOW ssl')).rows[0]?.ssl === 'on';
  } finally {
    await client.end();
  }
}

/**
 * Turns TLS on in the local PostgreSQL (plain connections keep working: pg_hba allows both on
 * loopback), with a certificate from the stack's CA, so clients can connect with
 * `sslmode=verify-full&sslrootcert=<ca.pem>` as they would to a managed database. Set with ALTER
 * SYSTEM and a reload rather than start-up flags, so a cluster started before this existed gets it
 * too; idempotent.
 */
export async function ensurePostgresTls(cfg: StackConfig, client: pg.Client): Promise<void> {
  const { keyFile, certFile } = serverCertificate(cfg);
  const current = await client.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('ssl', 'ssl_cert_file', 'ssl_key_file')`,
  );
  const setting = (name: string) => current.rows.find((r) => r.name === name)?.setting;
  if (setting('ssl') === 'on' && setting('ssl_cert_file') === certFile && setting('ssl_key_file') === keyFile)
    return;
  await client.query(`ALTER SYSTEM SET ssl_cert_file = ${literal(certFile)}`);
  await client.query(`ALTER SYSTEM SET ssl_key_file = ${literal(keyFile)}`);
  await client.query('ALTER SYSTEM SET ssl = on');
  await client.query('SELECT pg_reload_conf()');
  // The reload is asynchronous; a bad certificate leaves ssl off (the reason is in its log).
  await waitFor('PostgreSQL TLS (see `npm run stack -- logs postgres`)', () => sslOn(cfg), {
    timeoutMs: 10_000,
  });
}
