/**
 * Manual check of the peer adapters against the running PostgreSQL and Redis:
 *   npx tsx --conditions=kairos-source bench/src/adapters/smoke.ts
 * Per adapter: immediate and deferred jobs in both enqueue modes through an in-process worker, then a
 * worker process through SIGTERM, then teardown, which must leave no schema or Redis key behind.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Adapter, BenchEnv, BenchJob } from '../adapter.js';
import { peerAdapters } from './peers.js';

const base = {
  pgUrl: process.env.BENCH_PG_URL ?? 'postgres://kairos@127.0.0.1:55432/kairos',
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:56379',
  kafkaBrokers: '',
  registryUrl: '',
  connectUrl: '',
  jobEventPartitions: 1,
};
const deferMs = 1500;

function check(ok: boolean, message: string): void {
  if (!ok) throw new Error(message);
}

async function until(what: string, timeoutMs: number, done: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return Math.round(performance.now() - started);
}

const jobs = (prefix: string, n: number, dueAtMs: number | null): BenchJob[] =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}-${i}`, dueAtMs }));

async function inProcess(adapter: Adapter): Promise<string> {
  const single = jobs('s', 200, null);
  const batch = jobs('b', 200, null);
  const due = Date.now() + deferMs;
  const deferred = [...jobs('ds', 25, due), ...jobs('db', 25, due)];
  const expected = new Map([...single, ...batch, ...deferred].map((job) => [job.key, job.dueAtMs]));

  const tSingle = await timed(() => adapter.enqueue(single, 'single'));
  const tBatch = await timed(() => adapter.enqueue(batch, 'batch'));
  await adapter.enqueue(deferred.slice(0, 25), 'single');
  await adapter.enqueue(deferred.slice(25), 'batch');

  const starts = new Map<string, number>();
  let duplicates = 0;
  let unknown = 0;
  const workerStarted = Date.now();
  await adapter.startWorker(8, (key, startedAtMs) => {
    if (!expected.has(key)) unknown++;
    else if (starts.has(key)) duplicates++;
    else starts.set(key, startedAtMs);
  });
  await until('all 450 jobs to start', 30_000, () => starts.size === expected.size);
  const tImmediate =
    Math.max(...[...single, ...batch].map((job) => starts.get(job.key) ?? 0)) - workerStarted;
  await sleep(300); // room for a late duplicate to show up
  const tStop = await timed(() => adapter.stopWorker());

  const late = deferred.map((job) => (starts.get(job.key) ?? 0) - due);
  check(Math.min(...late) >= 0, `a deferred job started ${-Math.min(...late)} ms before its due time`);
  check(unknown === 0 && duplicates === 0, `${unknown} unknown and ${duplicates} duplicate starts`);
  return (
    `enqueue 200 single ${tSingle} ms, 200 batch ${tBatch} ms; 400 immediate started in ${tImmediate} ms; ` +
    `deferred late by ${Math.min(...late)}..${Math.max(...late)} ms; stopWorker ${tStop} ms`
  );
}

async function childProcess(adapter: Adapter): Promise<string> {
  const command = adapter.workerProcess(4, 5);
  const child = spawn(process.execPath, command.args, {
    env: { ...process.env, ...command.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    const done = new Set<string>();
    const started = new Set<string>();
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, key, at] = line.split(' ');
      if (kind === 'START' && key && Number.isFinite(Number(at))) started.add(key);
      else if (kind === 'DONE' && key) done.add(key);
      else process.stderr.write(`unexpected worker output: ${line}\n`);
    });
    const t0 = performance.now();
    await adapter.enqueue(jobs('p', 20, null), 'batch');
    await until('20 DONE lines from the worker process', 30_000, () => done.size === 20);
    const tDone = Math.round(performance.now() - t0);
    check(started.size === 20, `${started.size} START lines for 20 jobs`);
    const t1 = performance.now();
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    check(code === 0 && signal === null, `worker process ended with code ${code}, signal ${signal}`);
    return `process: 20 done ${tDone} ms after enqueue (incl. startup), exit on SIGTERM ${Math.round(performance.now() - t1)} ms`;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

async function leftovers(env: BenchEnv): Promise<string[]> {
  const client = new pg.Client({ connectionString: env.pgUrl });
  const redis = new Redis(env.redisUrl);
  try {
    await client.connect();
    const schemas = await client.query<{ nspname: string }>(
      'SELECT nspname FROM pg_namespace WHERE strpos(nspname, $1) > 0',
      [env.namespace],
    );
    const keys = await redis.keys(`*${env.namespace}*`);
    return [...schemas.rows.map((row) => `schema ${row.nspname}`), ...keys.map((key) => `redis key ${key}`)];
  } finally {
    await client.end();
    redis.disconnect();
  }
}

for (const adapter of peerAdapters()) {
  const env: BenchEnv = { ...base, namespace: `smoke${randomBytes(4).toString('hex')}` };
  const parts: string[] = [];
  try {
    try {
      parts.push(`setup ${await timed(() => adapter.setup(env))} ms`);
      parts.push(await inProcess(adapter));
      parts.push(await childProcess(adapter));
    } finally {
      parts.push(`teardown ${await timed(() => adapter.teardown())} ms`);
    }
    const left = await leftovers(env);
    check(left.length === 0, `teardown left ${left.join(', ')}`);
    console.log(`ok   ${adapter.name}: ${parts.join('; ')}`);
  } catch (err) {
    process.exitCode = 1;
    console.log(
      `FAIL ${adapter.name}: ${parts.join('; ')}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
