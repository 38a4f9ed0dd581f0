import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { deleteConnector, dropSlot } from '@kairos/ops';
import { ConfigResourceTypes } from 'kafkajs';
import { expect, test } from 'vitest';
import { createJobsOverHttp, startDeployment, waitAllSucceeded } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** `npm run build` once for this file: the compiled entry points are what production runs. */
function build(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'pipe' });
}

test('kairos bootstrap prepares a cluster from KAIROS_* settings, idempotently: migrations, topics, connector', async () => {
  build();
  const ns = await useNamespace('bootstrap');
  const env = {
    ...process.env,
    KAIROS_PG_URL: ns.services.pgUrl,
    KAIROS_DB_SCHEMA: ns.schema,
    KAIROS_KAFKA_BROKERS: ns.services.kafkaBrokers,
    KAIROS_CONNECT_URL: ns.services.connectUrl,
    KAIROS_TOPIC_PREFIX: ns.prefix,
    KAIROS_RESOURCE_CLASSES: 'default,io',
    KAIROS_JOB_EVENT_PARTITIONS: String(ns.services.jobEventPartitions),
    KAIROS_TOPIC_MIN_INSYNC_REPLICAS: '1',
  };
  const connector = `${ns.prefix}kairos-outbox`;
  ns.defer(async () => {
    await deleteConnector(ns.services.connectUrl, connector);
    await dropSlot(ns.services.pgUrl, `kairos_outbox_${ns.schema}`);
  });
  const run = () =>
    execFileSync(process.execPath, [resolve(ROOT, 'apps/cli/dist/main.js'), 'bootstrap'], {
      env,
      encoding: 'utf8',
    });
  const first = run();
  expect(first).toMatch(/migrations: applied/);
  expect(first).toMatch(/topics: 14 created/);
  expect(first).toContain(`connector ${connector}: RUNNING`);
  const second = run();
  expect(second).toMatch(/migrations: up to date/);
  expect(second).toMatch(/topics: 0 created/);
  expect(second).toContain('bootstrap done');

  const admin = ns.admin();
  await admin.connect();
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: `${ns.prefix}kairos.tasks.io`,
        configNames: ['min.insync.replicas'],
      },
    ],
  });
  expect(described.resources[0]?.configEntries[0]?.configValue).toBe('1');
  await admin.disconnect();
  const pool = ns.pgPool(1);
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM outbox WHERE aggregatetype <> 'heartbeat'",
  );
  expect(Number(rows[0]?.n)).toBe(0);
  await pool.end();

  // A bad setting is one clear line and exit code 2, before anything is touched.
  const bad = spawnSync(process.execPath, [resolve(ROOT, 'apps/cli/dist/main.js'), 'bootstrap'], {
    env: { ...env, KAIROS_TOPIC_REPLICATION_FACTOR: 'three' },
    encoding: 'utf8',
  });
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain(
    'configuration error: KAIROS_TOPIC_REPLICATION_FACTOR=three must be an integer',
  );
}, 180_000);

test('the compiled apps run on plain Node as in production: a job through the API runs on the compiled worker', async () => {
  build();
  const ns = await useNamespace('compiled');
  const d = await startDeployment(ns, {
    apps: ['api', 'delay-tier', 'tracker', 'ingest', 'worker-example'],
    compiled: true,
  });
  expect(d.apps().every((a) => a.child.spawnargs.some((arg) => arg.endsWith('/dist/main.js')))).toBe(true);
  const jobs = await createJobsOverHttp(d, [
    { tenant: 'acme', type: 'demo.hello', resource_class: 'default', payload: { name: 'compiled' } },
  ]);
  await waitAllSucceeded(
    d,
    jobs.map((j) => j.id),
    60_000,
  );
  // Every app with an operations port answers its probes and serves metrics there.
  for (const kind of ['tracker', 'ingest'] as const) {
    const url = d.opsUrls.get(d.apps(kind)[0]?.instanceId ?? '');
    expect(url, kind).toBeDefined();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status, `${kind} /readyz`).toBe(200);
    expect(((await ready.json()) as { checks: { name: string }[] }).checks.map((c) => c.name)).toContain(
      'postgresql',
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${url}/metrics`)).text()).toContain('process_cpu_seconds_total');
  }
  // The compiled API serves the console `npm run build` made: its page at any /console/ address
  // (the pages route in the browser), under a CSP, and `/` leads there.
  for (const path of ['/console/', '/console/jobs/deep-link']) {
    const page = await fetch(`${d.apiUrl}${path}`);
    expect(page.status, path).toBe(200);
    expect(page.headers.get('content-type'), path).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy'), path).toContain("script-src 'self'");
    expect(await page.text(), path).toContain('<div id="app">');
  }
  const home = await fetch(`${d.apiUrl}/`, { redirect: 'manual' });
  expect([home.status, home.headers.get('location')]).toEqual([302, '/console/']);
}, 180_000);
