import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { parse } from 'yaml';
import { down, prometheusConfig, stackConfigFromEnv, status, upOptional } from '@kairos/ops';
import { checkPrerequisites } from '../src/prereqs.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A port nothing listens on now (the OS picks it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

test("the stack's Prometheus scrapes the apps' metrics ports and loads the alert rules", () => {
  const cfg = stackConfigFromEnv(ROOT, {
    KAIROS_API_METRICS_PORT: '1234',
    KAIROS_TRACKER_METRICS_PORT: '0',
    KAIROS_PROMETHEUS_EXTRA_TARGETS: '127.0.0.1:9464, worker-2:9464',
  });
  const config = parse(prometheusConfig(cfg)) as {
    rule_files: string[];
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  expect(config.rule_files).toEqual([resolve(ROOT, 'ops/prometheus/alerts.yml')]);
  expect(
    Object.fromEntries(config.scrape_configs.map((j) => [j.job_name, j.static_configs[0]?.targets])),
  ).toEqual({
    'kairos-api': ['127.0.0.1:1234'],
    'kairos-delay-tier': ['127.0.0.1:58091'],
    // Port 0: the app picks one, so it cannot be scraped from here.
    'kairos-ingest': ['127.0.0.1:58093'],
    'kairos-workers': ['127.0.0.1:9464', 'worker-2:9464'],
  });
  expect(stackConfigFromEnv(ROOT, {}).optional).toEqual([]);
  expect(() => stackConfigFromEnv(ROOT, { KAIROS_STACK_WITH: 'grafana' })).toThrow(
    'KAIROS_STACK_WITH: unknown optional service "grafana"; one of: prometheus, redis-cluster',
  );
  expect(() => stackConfigFromEnv(ROOT, { KAIROS_PROMETHEUS_EXTRA_TARGETS: 'nope' })).toThrow(
    /not host:port/,
  );
});

/** Every PromQL query of the dashboard and the scaling examples that this Prometheus refuses to parse. */
async function refusedQueries(url: string): Promise<string[]> {
  const dashboard = JSON.parse(readFileSync(resolve(ROOT, 'ops/grafana/dashboards/kairos.json'), 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  const keda = parse(readFileSync(resolve(ROOT, 'ops/k8s/keda-worker-scaledobject.yaml'), 'utf8')) as {
    spec: { triggers: { metadata: { query: string } }[] };
  };
  const exprs = [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...keda.spec.triggers.map((t) => t.metadata.query),
  ];
  const refused: string[] = [];
  for (const expr of exprs) {
    // Grafana's variables as Grafana would fill them in.
    const query = expr.replaceAll('$__rate_interval', '1m').replaceAll('$class', '.*');
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
    if (res.status !== 200) refused.push(`${query}: ${await res.text()}`);
  }
  expect(exprs.length).toBeGreaterThan(30);
  return refused;
}

test('up starts the optional Prometheus, ready, with every alert rule loaded, parsing every dashboard query; down stops it', async () => {
  // Found, or installed as the stack's tools are (root with apt-get), or a clear error naming it.
  checkPrerequisites(['prometheus'], () => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'kairos-prometheus-'));
  const cfg = stackConfigFromEnv(ROOT, {
    KAIROS_STACK_DIR: dir,
    KAIROS_PROMETHEUS_PORT: String(await freePort()),
    KAIROS_STACK_WITH: 'prometheus',
  });
  const lines: string[] = [];
  try {
    const [state] = await upOptional(cfg, (l) => lines.push(l));
    expect(state).toMatchObject({ name: 'prometheus', healthy: true, managed: true, action: 'started' });
    const url = `http://127.0.0.1:${cfg.ports.prometheus}`;
    expect((await fetch(`${url}/-/ready`)).status).toBe(200);
    const rules = (await (await fetch(`${url}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules.map((r) => r.name));
    const written = (
      parse(readFileSync(resolve(ROOT, 'ops/prometheus/alerts.yml'), 'utf8')) as {
        groups: { rules: { alert: string }[] }[];
      }
    ).groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(loaded).toEqual(written);
    expect((await status(cfg)).find((s) => s.name === 'prometheus')).toMatchObject({ healthy: true });
    expect(await refusedQueries(url)).toEqual([]);
  } finally {
    await down(cfg, () => undefined, ['prometheus']);
    rmSync(dir, { recursive: true, force: true });
  }
  expect((await status(cfg)).find((s) => s.name === 'prometheus')).toMatchObject({
    healthy: false,
    pid: undefined,
  });
}, 60_000);
