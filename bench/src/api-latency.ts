/**
 * Latency of single creates (`POST /v1/jobs`) against an API process of its own, in a namespace
 * of its own (schema + topics, removed at the end), so the client's CPU is not the server's:
 *
 *   npx tsx --conditions=kairos-source bench/src/api-latency.ts --requests 2000 --concurrency 1
 *
 * `--cpu-prof <dir>` starts the API under `node --cpu-prof` (the profile is written when it
 * stops); `--root <dir>` starts the API of another checkout (e.g. the commit before a change,
 * for an A/B on the same stack). Every KAIROS_CREATE_* variable of this process reaches the API.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPool, ensureJobPartitions, migrate } from '@kairos/db';
import { createKafka, deleteTopicsWithPrefix, ensureTopics, topicCatalogue } from '@kairos/kafka';
import { Command } from 'commander';
import pg from 'pg';
import { benchServices, ROOT } from './services.js';
import { summarize } from './stats.js';

interface Args {
  readonly requests: number;
  readonly concurrency: number;
  readonly warmup: number;
  readonly cpuProf?: string;
  readonly root: string;
  readonly gapMs: number;
}

const args = new Command()
  .option('--requests <n>', 'measured requests', (v) => Number(v), 2000)
  .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 1)
  .option('--warmup <n>', 'requests before measuring', (v) => Number(v), 300)
  .option('--cpu-prof <dir>', 'write a CPU profile of the API here')
  .option('--root <dir>', 'checkout whose API to start', ROOT)
  .option('--gap-ms <ms>', 'pause between requests (an idle stack: sparse requests)', (v) => Number(v), 0)
  .parse()
  .opts<Args>();

const services = await benchServices(ROOT, (line) => console.error(line));
const id = randomBytes(4).toString('hex');
const schema = `lat_${id}`;
const prefix = `lat${id}.`;
const port = 20_000 + Math.floor(Math.random() * 20_000);
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
const kafka = createKafka({ brokers: services.kafkaBrokers.split(','), clientId: `api-latency-${id}` });

const admin = new pg.Client({ connectionString: services.pgUrl });
await admin.connect();
await admin.query(`CREATE SCHEMA "${schema}"`);
const pool = createPool({ connectionString: services.pgUrl, schema, max: 2 });
try {
  await migrate(pool);
  await ensureJobPartitions(pool, new Date());
  await ensureTopics(
    kafka,
    topicCatalogue({ prefix, resourceClasses: ['default'], jobEventPartitions: services.jobEventPartitions }),
  );
  const api = startApi();
  try {
    await waitHealthy();
    await run(args.warmup, args.concurrency);
    const before = await commits();
    const started = performance.now();
    const samples = await run(args.requests, args.concurrency);
    const seconds = (performance.now() - started) / 1000;
    const jobs = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs');
    const s = summarize(samples);
    console.log(
      JSON.stringify({
        api: args.root,
        requests: args.requests,
        concurrency: args.concurrency,
        gapMs: args.gapMs,
        groupWaitMs: process.env.KAIROS_CREATE_GROUP_WAIT_MS ?? '(default)',
        p50: s.p50,
        p90: percentile(samples, 0.9),
        p99: s.p99,
        max: s.max,
        perSecond: Math.round(args.requests / seconds),
        jobs: jobs.rows[0]?.n,
        samples: args.gapMs > 0 ? samples.map((v) => Number(v.toFixed(2))) : undefined,
        // The whole cluster's commits: only meaningful on a quiet stack.
        commitsPerCreate: Number(((await commits()) - before) / args.requests).toFixed(2),
      }),
    );
  } finally {
    api.kill('SIGTERM');
    await new Promise((r) => api.once('exit', r));
  }
} finally {
  await pool.end();
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  await admin.end();
  await deleteTopicsWithPrefix(kafka, prefix);
}

function startApi() {
  const prof = args.cpuProf === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(args.cpuProf)];
  return spawn(
    process.execPath,
    [...prof, '--conditions=kairos-source', '--import', 'tsx', resolve(args.root, 'apps/api/src/main.ts')],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        KAIROS_PG_URL: services.pgUrl,
        KAIROS_DB_SCHEMA: schema,
        KAIROS_KAFKA_BROKERS: services.kafkaBrokers,
        KAIROS_REGISTRY_URL: services.registryUrl,
        KAIROS_TOPIC_PREFIX: prefix,
        KAIROS_JOB_EVENT_PARTITIONS: String(services.jobEventPartitions),
        KAIROS_RESOURCE_CLASSES: 'default',
        KAIROS_API_PORT: String(port),
        // Not scraped here: any free port, so a running `npm start` does not collide with it.
        KAIROS_API_METRICS_PORT: '0',
        KAIROS_LOG_LEVEL: 'warn',
      },
    },
  );
}

function post(path: string, body: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function waitHealthy(): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the API did not come up within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `n` creates, `concurrency` at a time; the latency of each, ms. */
async function run(n: number, concurrency: number): Promise<number[]> {
  const samples: number[] = [];
  const dueAt = new Date(Date.now() + 3600_000).toISOString();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const body = JSON.stringify({
          tenant: 'bench',
          type: 'bench',
          resource_class: 'default',
          payload: { i },
          due_at: dueAt,
        });
        const t0 = performance.now();
        const status = await post('/v1/jobs', body);
        samples.push(performance.now() - t0);
        if (status !== 201) throw new Error(`POST /v1/jobs answered ${status}`);
        if (args.gapMs > 0) await new Promise((r) => setTimeout(r, args.gapMs));
      }
    }),
  );
  return samples;
}

async function commits(): Promise<number> {
  const r = await admin.query<{ n: string }>(
    'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(r.rows[0]?.n ?? 0);
}

function percentile(samples: readonly number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return Number((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0).toFixed(2));
}
