import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from 'vitest';
import { startDeployment } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Bytes and package count of an installed node_modules. */
function footprint(dir: string): { bytes: number; packages: number } {
  let bytes = 0;
  let packages = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else bytes += statSync(p).size;
      if (e.isFile() && e.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(d)) packages++;
    }
  };
  walk(join(dir, 'node_modules'));
  return { bytes, packages };
}

// A service of a backend team: its own folder outside the repository, the SDKs from their
// tarballs by plain `npm install`, an ESM worker and a CommonJS producer.
const WORKER = `import { Worker } from '@kairos/worker-sdk';
const e = process.env;
const worker = new Worker({
  brokers: e.KAIROS_KAFKA_BROKERS.split(','), registryUrl: e.KAIROS_REGISTRY_URL,
  redisUrl: e.KAIROS_REDIS_URL, redisKeyPrefix: e.KAIROS_TOPIC_PREFIX,
  topicPrefix: e.KAIROS_TOPIC_PREFIX, resourceClasses: ['default'],
});
worker.handle('sdk.hello', (payload, ctx) => console.log('HANDLED ' + ctx.jobId + ' ' + payload.name));
await worker.start();
console.log('READY');
process.once('SIGTERM', () => worker.stop().then(() => process.exit(0)));
`;
const PRODUCER = `const { KairosClient } = require('@kairos/client');
const e = process.env;
(async () => {
  const client = new KairosClient({
    brokers: e.KAIROS_KAFKA_BROKERS.split(','), registryUrl: e.KAIROS_REGISTRY_URL,
    topicPrefix: e.KAIROS_TOPIC_PREFIX, tenant: 'acme', outcomes: true,
  });
  await client.start();
  const sent = await client.schedule({ type: 'sdk.hello', resourceClass: 'default', payload: { name: 'outside' } });
  const outcome = await client.awaitOutcome(sent, { timeoutMs: 60000 });
  console.log('OUTCOME ' + JSON.stringify(outcome));
  await client.close();
})().catch((err) => { console.error(err); process.exit(1); });
`;

function lines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr])
    if (stream) createInterface({ input: stream }).on('line', onLine);
}

test('the packed SDKs install with npm outside the repository; a worker and a producer from there run a job', async () => {
  const ns = await useNamespace('sdk-install');
  const d = await startDeployment(ns, { apps: ['ingest', 'delay-tier', 'tracker'] });
  const dir = mkdtempSync(join(tmpdir(), 'kairos-sdk-service-'));
  ns.defer(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  expect(dir.startsWith(ROOT)).toBe(false);

  const packed = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts/pack-sdks.mjs'), '--out', join(dir, 'packages')],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { name: string; tarball: string; bytes: number });
  expect(packed.map((p) => p.name).sort()).toEqual(['@kairos/client', '@kairos/worker-sdk']);
  const dependencies = Object.fromEntries(packed.map((p) => [p.name, `file:${p.tarball}`]));
  const service = join(dir, 'service');
  mkdirSync(service);
  writeFileSync(
    join(service, 'package.json'),
    JSON.stringify({ name: 'a-service', private: true, dependencies }),
  );
  writeFileSync(join(service, 'worker.mjs'), WORKER);
  writeFileSync(join(service, 'producer.cjs'), PRODUCER);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: service,
    stdio: 'pipe',
  });
  const size = footprint(service);
  console.log(`SDK install footprint: ${size.packages} packages, ${(size.bytes / 2 ** 20).toFixed(1)} MiB`);
  expect(readdirSync(join(service, 'node_modules/@kairos')).sort()).toEqual(['client', 'worker-sdk']);

  const env = { ...process.env, ...d.env() };
  const handled: string[] = [];
  const worker = spawn(process.execPath, ['worker.mjs'], { cwd: service, env, stdio: 'pipe' });
  ns.defer(async () => {
    worker.kill('SIGKILL');
    await new Promise((r) => (worker.exitCode === null ? worker.once('exit', r) : r(null)));
  });
  let ready = false;
  lines(worker, (l) => {
    if (l === 'READY') ready = true;
    else if (l.startsWith('HANDLED ')) handled.push(l);
    else console.log(`[worker] ${l}`);
  });
  await eventually('the installed worker to start', () => ready, 60_000);

  const out = execFileSync(process.execPath, ['producer.cjs'], { cwd: service, env, encoding: 'utf8' });
  const outcome = JSON.parse(out.slice(out.indexOf('OUTCOME ') + 8)) as { status: string; jobId: string };
  expect(outcome.status).toBe('accepted');
  await eventually('the job to be handled by the installed worker', () =>
    handled.includes(`HANDLED ${outcome.jobId} outside`),
  );
  await eventually('the job to be SUCCEEDED', async () => {
    const { rows } = await d.pool.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [
      outcome.jobId,
    ]);
    return rows[0]?.state === 'SUCCEEDED';
  });
}, 240_000);
