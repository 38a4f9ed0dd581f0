import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// The kairos CLI, spawned as users run it, against a real API: JSON for scripts, tables for
// people, exit codes that mean something, the key from the environment or the config file.

const MAIN = resolve(import.meta.dirname, '../../apps/cli/src/main.ts');
const run = promisify(execFile);

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function kairos(p: Pipeline, args: string[], env: Record<string, string> = {}): Promise<Result> {
  try {
    const r = await run(process.execPath, ['--conditions=kairos-source', '--import', 'tsx', MAIN, ...args], {
      env: {
        ...process.env,
        KAIROS_API_URL: p.apiUrl,
        KAIROS_API_KEY: p.apiKey,
        KAIROS_CONFIG: '/nonexistent',
        ...env,
      },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const json = <T>(r: Result): T => JSON.parse(r.stdout) as T;

test('kairos jobs, dlq replay, keys and status against the API; exit codes; JSON and tables', async () => {
  const ns = await useNamespace('cli');
  const p = await startPipeline(ns);

  const created = await kairos(p, [
    '--json',
    'jobs',
    'create',
    '--type',
    'cli.job',
    '--class',
    'io',
    '--tenant',
    'acme',
    '--delay-ms',
    '3600000',
    '--payload',
    '{"to":"a@example.com"}',
  ]);
  expect(created.code, created.stderr).toBe(0);
  const job = json<{ id: string; state: string }>(created);
  expect(job.state).toBe('SCHEDULED');

  const table = await kairos(p, ['jobs', 'list', '--tenant', 'acme']);
  expect(table.code).toBe(0);
  expect(table.stdout).toContain(job.id);
  expect(table.stdout).toMatch(/│ id\s+│ tenant/);
  const got = await kairos(p, ['--json', 'jobs', 'get', job.id]);
  expect(json<{ payload: unknown }>(got).payload).toEqual({ to: 'a@example.com' });
  expect((await kairos(p, ['--json', 'jobs', 'attempts', job.id])).code).toBe(0);

  // Exit codes: not found 4, conflict 5, bad input 2, no key 3.
  expect((await kairos(p, ['jobs', 'get', '00000000-0000-4000-8000-000000000000'])).code).toBe(4);
  expect((await kairos(p, ['jobs', 'cancel', job.id])).code).toBe(0);
  const again = await kairos(p, ['jobs', 'cancel', job.id]);
  expect(again.code).toBe(5);
  expect(again.stderr).toMatch(/409 CONFLICT/);
  const bad = await kairos(p, ['jobs', 'create', '--type', 'cli.job', '--tenant', 'acme', '--class', 'nope']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/resource_class/);
  expect((await kairos(p, ['jobs', 'list', '--tenant', 'acme'], { KAIROS_API_KEY: '' })).code).toBe(3);
  expect((await kairos(p, ['jobs', 'frobnicate'])).code).toBe(2);

  // Dead letters: a dry run by default, then --confirm replays and follows to the end.
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(
      json<{ id: string }>(
        await kairos(p, [
          '--json',
          'jobs',
          'create',
          '--type',
          'cli.dead',
          '--tenant',
          'acme',
          '--delay-ms',
          '3600000',
        ]),
      ).id,
    );
  }
  await p.pool.query(
    `UPDATE jobs SET state = 'FAILED', finished_at = now(), last_failure_class = 'permanent' WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  expect(
    json<{ dead_letters: unknown[] }>(await kairos(p, ['--json', 'dlq', 'list', '--tenant', 'acme']))
      .dead_letters,
  ).toHaveLength(5);
  const dry = await kairos(p, ['dlq', 'replay', '--tenant', 'acme', '--type', 'cli.dead']);
  expect(dry.stdout).toMatch(/dry run: 5 dead letter\(s\) would be replayed; nothing changed/);
  expect(
    (await p.pool.query('SELECT count(*)::int AS n FROM jobs WHERE replay_of IS NOT NULL')).rows[0],
  ).toEqual({ n: 0 });
  const replay = await kairos(p, [
    '--json',
    'dlq',
    'replay',
    '--tenant',
    'acme',
    '--type',
    'cli.dead',
    '--rate',
    '50',
    '--confirm',
  ]);
  expect(replay.code, replay.stderr).toBe(0);
  expect(json<{ state: string; replayed: number }>(replay)).toMatchObject({ state: 'DONE', replayed: 5 });
  expect(
    (await p.pool.query('SELECT count(*)::int AS n FROM jobs WHERE replay_of = ANY($1::uuid[])', [ids]))
      .rows[0],
  ).toEqual({ n: 5 });

  // Keys: create (shown once), list, revoke; the key from a config file works too.
  const key = json<{ id: string; key: string }>(
    await kairos(p, [
      '--json',
      'keys',
      'create',
      '--name',
      'ci',
      '--tenant',
      'acme',
      '--scopes',
      'jobs:read',
    ]),
  );
  expect(
    json<{ keys: { id: string }[] }>(await kairos(p, ['--json', 'keys', 'list'])).keys.map((k) => k.id),
  ).toContain(key.id);
  const status = await kairos(p, ['--json', 'status'], { KAIROS_API_KEY: key.key });
  expect(json<{ health: string; key: { tenant: string } }>(status)).toMatchObject({
    health: 'ok',
    key: { tenant: 'acme' },
  });
  const dir = mkdtempSync(resolve(tmpdir(), 'kairos-cli-'));
  ns.defer(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  writeFileSync(resolve(dir, 'config.json'), JSON.stringify({ url: p.apiUrl, key: key.key }));
  const fromFile = await kairos(p, ['--json', 'status'], {
    KAIROS_API_KEY: '',
    KAIROS_API_URL: '',
    KAIROS_CONFIG: resolve(dir, 'config.json'),
  });
  expect(json<{ key: { key_id: string } }>(fromFile).key.key_id).toBe(key.id);
  expect((await kairos(p, ['keys', 'revoke', key.id])).code).toBe(0);
  expect((await kairos(p, ['status'], { KAIROS_API_KEY: key.key })).code).toBe(3);
}, 120_000);
