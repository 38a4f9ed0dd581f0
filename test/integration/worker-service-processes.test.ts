/**
 * Worker services as users deploy them (issue 32): each service its own OS process with its own
 * handlers, beside the example worker, all on class io, on Kairos's own app processes. Handler
 * calls are counted from every process's output, so a job run twice, or run by the wrong
 * service, is seen. A type nobody handles waits (QUEUED, never FAILED), is alerted by a real
 * Prometheus evaluating ops/prometheus/alerts.yml, and runs once its service starts. A service
 * restarted (rolling, SIGTERM) with one handler added and one removed while jobs flow loses none,
 * runs none twice and dead-letters none.
 */
import { resolve } from 'node:path';
import type { ProcessDeployment } from '@kairos/ops';
import { expect, test } from 'vitest';
import { createJobsOverHttp, startDeployment } from '../support/deployment.js';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';
import { startPrometheus } from '../support/prometheus.js';
import { workerProcessEnv } from '../support/worker-env.js';

const SERVICE = resolve(import.meta.dirname, '../support/service-process.ts');

/** Every handler call seen on the processes' output: job id → `service` of each call. */
class Calls {
  readonly ran = new Map<string, string[]>();
  tierUrl = '';
  onLine = (app: string, line: string): void => {
    const m = /^RAN (\S+) \S+ (\S+) \d+$/.exec(line);
    if (m?.[1] && m[2]) return this.#add(m[2], m[1]);
    if (!line.startsWith('{')) return;
    const l = JSON.parse(line) as { msg?: string; jobId?: string; adminUrl?: string };
    if (l.msg?.startsWith('hello, ') && l.jobId) this.#add(l.jobId, 'example');
    if (l.msg === 'delay tier started' && l.adminUrl && app.startsWith('delay-tier'))
      this.tierUrl = l.adminUrl;
  };
  #add(job: string, who: string): void {
    this.ran.set(job, [...(this.ran.get(job) ?? []), who]);
  }
  /** Each job ran exactly once, by `who`. */
  expectOnce(ids: readonly string[], who: string): void {
    const wrong = ids.filter((id) => this.ran.get(id)?.join() !== who);
    expect(
      wrong.map((id) => `${id}: ${this.ran.get(id)?.join() ?? 'never'}`),
      `jobs of ${who} not run exactly once by it`,
    ).toEqual([]);
  }
}

function startService(d: ProcessDeployment, ns: Namespace, service: string, types: string[]) {
  const env = {
    ...JSON.parse(workerProcessEnv(ns)),
    resourceClasses: ['io'],
    service,
    types,
    registryIntervalMs: 1000,
  };
  return d.startWorker(SERVICE, 'READY', { SERVICE_ENV: JSON.stringify(env) });
}

async function create(
  d: ProcessDeployment,
  type: string,
  n: number,
  payload: object = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let at = 0; at < n; at += 500) {
    const jobs = Array.from({ length: Math.min(500, n - at) }, (_, i) => ({
      tenant: 'acme',
      type,
      resource_class: 'io',
      payload: { name: `n${at + i}`, ...payload },
    }));
    ids.push(...(await createJobsOverHttp(d, jobs)).map((j) => j.id));
  }
  return ids;
}

/** The lag on kairos.waiting.io of the waiting router's group, as `GET /v1/status` (kairos status) shows it. */
async function waitingLag(d: ProcessDeployment): Promise<number> {
  const res = await fetch(`${d.apiUrl}/v1/status`, { headers: { authorization: `Bearer ${d.apiKey}` } });
  const status = (await res.json()) as {
    groups: { group: string; topics: { topic: string; lag: number }[] }[];
  };
  const topics = status.groups.filter((g) => g.group.endsWith('-waiting')).flatMap((g) => g.topics);
  return topics.filter((t) => t.topic.endsWith('kairos.waiting.io')).reduce((n, t) => n + t.lag, 0);
}

async function states(d: ProcessDeployment): Promise<Record<string, number>> {
  const { rows } = await d.pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM jobs GROUP BY state',
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

async function countStates(d: ProcessDeployment, ids: readonly string[]): Promise<Record<string, number>> {
  const { rows } = await d.pool.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM jobs WHERE id = ANY($1) GROUP BY state',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

test('two services and the example worker share class io: each job runs once in its own service; a type nobody handles waits, alerted, until its service starts', async () => {
  const ns = await useNamespace('service-procs');
  const calls = new Calls();
  const d = await startDeployment(ns, {
    apps: ['api', 'delay-tier', 'tracker', 'worker-example'],
    env: { KAIROS_WAITING_ALERT_AFTER_MS: '60000' },
    onLine: calls.onLine,
  });
  const prometheus = await startPrometheus(ns, [new URL(calls.tierUrl).host]);
  await Promise.all([
    startService(d, ns, 'mailer', ['mail.send']),
    startService(d, ns, 'billing', ['invoice.make']),
  ]);

  const mail = await create(d, 'mail.send', 1000);
  const invoices = await create(d, 'invoice.make', 1000);
  const hello = await create(d, 'demo.hello', 1000);
  const ledgerAt = Date.now();
  const ledger = await create(d, 'ledger.close', 50);
  await eventually(
    '3,000 handled jobs to succeed',
    async () => (await states(d)).SUCCEEDED === 3000,
    240_000,
  );
  calls.expectOnce(mail, 'mailer');
  calls.expectOnce(invoices, 'billing');
  calls.expectOnce(hello, 'example');

  // Nobody handles ledger.close: after 2 minutes its jobs still wait, unrun, alerted.
  await eventually(
    'KairosTasksWaiting to fire for io',
    async () =>
      (await prometheus.alerts()).some(
        (a) =>
          a.labels.alertname === 'KairosTasksWaiting' &&
          a.labels.resource_class === 'io' &&
          a.state === 'firing',
      ),
    120_000,
  );
  await eventually('2 minutes to pass', () => Date.now() - ledgerAt >= 120_000, 130_000);
  expect(await countStates(d, ledger)).toEqual({ QUEUED: 50 });
  for (const id of ledger) expect(calls.ran.get(id), id).toBeUndefined();
  const metrics = await (await fetch(`${calls.tierUrl}/metrics`)).text();
  expect(metrics).toContain('kairos_tasks_waiting{resource_class="io",job_type="ledger.close"} 50');
  // kairos status shows them too: the waiting router's group lags by at least those 50 on io.
  expect(await waitingLag(d)).toBeGreaterThanOrEqual(50);

  // The service that handles them starts: each runs once, there, and the alert clears.
  await startService(d, ns, 'ledger', ['ledger.close']);
  await eventually(
    'the ledger jobs to succeed',
    async () => (await countStates(d, ledger)).SUCCEEDED === 50,
    60_000,
  );
  calls.expectOnce(ledger, 'ledger');
  expect(await states(d)).toEqual({ SUCCEEDED: 3050 });
  await eventually(
    'KairosTasksWaiting to clear',
    async () => !(await prometheus.alerts()).some((a) => a.labels.alertname === 'KairosTasksWaiting'),
  );
}, 600_000);

test('a service restarted one process at a time with a handler added and one removed, while jobs flow: none lost, none twice, none dead-lettered', async () => {
  const ns = await useNamespace('service-redeploy');
  const calls = new Calls();
  const d = await startDeployment(ns, { onLine: calls.onLine });
  const v1 = ['order.pack', 'order.ship'];
  const v2 = ['order.ship', 'order.bill'];
  const shop = [await startService(d, ns, 'shop', v1), await startService(d, ns, 'shop', v1)];

  const created: Record<string, string[]> = { 'order.pack': [], 'order.ship': [], 'order.bill': [] };
  let flowing = true;
  const flow = (async () => {
    while (flowing) {
      for (const type of Object.keys(created))
        created[type]?.push(...(await create(d, type, 20, { ms: 20 })));
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const rolled = async (i: number) => {
    const old = shop[i];
    if (old) await d.kill(old, 'SIGTERM');
    shop[i] = await startService(d, ns, 'shop', v2);
  };
  await eventually('jobs to flow', async () => ((await states(d)).SUCCEEDED ?? 0) > 200);
  await rolled(0);
  await eventually('more jobs to flow', async () => ((await states(d)).SUCCEEDED ?? 0) > 500);
  await rolled(1);
  await eventually('more jobs after the deploy', async () => ((await states(d)).SUCCEEDED ?? 0) > 800);
  // order.pack moved to a service of its own.
  await startService(d, ns, 'packer', ['order.pack']);
  await eventually('more jobs with the packer', async () => ((await states(d)).SUCCEEDED ?? 0) > 1100);
  flowing = false;
  await flow;
  const all = Object.values(created).flat();
  await eventually(
    'every job to succeed',
    async () => (await countStates(d, all)).SUCCEEDED === all.length,
    120_000,
  );
  expect(await states(d)).toEqual({ SUCCEEDED: all.length });
  const twice = all.filter((id) => (calls.ran.get(id)?.length ?? 0) !== 1);
  expect(twice.map((id) => `${id}: ${calls.ran.get(id)?.join() ?? 'never'}`)).toEqual([]);
  for (const id of created['order.bill'] ?? []) expect(calls.ran.get(id)).toEqual(['shop']);
  for (const id of created['order.pack'] ?? []) expect(['shop', 'packer']).toContain(calls.ran.get(id)?.[0]);
  const { rows } = await d.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM attempts WHERE outcome <> 'SUCCEEDED' OR outcome IS NULL",
  );
  expect(rows[0]?.n, 'attempts that did not succeed').toBe(0);
}, 600_000);
