import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { parse } from 'yaml';
import { prometheusConfig, stackConfigFromEnv } from '@kairos/ops';
import { definedMetrics, EXTERNAL_METRICS, isKnown, metricsOf } from './metric-names.js';

const OPS = resolve(import.meta.dirname, '..');
const read = (path: string) => readFileSync(resolve(OPS, path), 'utf8');

interface Target {
  readonly expr: string;
  readonly refId: string;
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number };
  readonly datasource?: { readonly uid: string };
  readonly targets?: readonly Target[];
}
interface Dashboard {
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { name: string; definition?: string }[] };
}

const known = new Set([...definedMetrics(), ...EXTERNAL_METRICS]);
const unknownIn = (exprs: readonly string[]) =>
  exprs.flatMap((e) =>
    metricsOf(e)
      .filter((n) => !isKnown(n, known))
      .map((n) => `${n} in ${e}`),
  );

test('PromQL metric names are read out of expressions: not functions, labels, ranges or keywords', () => {
  expect(
    metricsOf(
      'histogram_quantile(0.99, sum by (le, resource_class) (rate(kairos_dispatch_lag_seconds_bucket{resource_class=~"$class"}[$__rate_interval]))) > 1',
    ),
  ).toEqual(['kairos_dispatch_lag_seconds_bucket']);
  expect(metricsOf('a_total / ignoring (x) b and on (y) c unless time() - d offset 5m > 1e3')).toEqual([
    'a_total',
    'b',
    'c',
    'd',
  ]);
  expect(isKnown('kairos_x_seconds_count', new Set(['kairos_x_seconds']))).toBe(true);
  expect(definedMetrics()).toContain('kairos_http_request_duration_seconds');
});

test('the Grafana dashboard is valid and queries only metrics Kairos defines', () => {
  const d = JSON.parse(read('grafana/dashboards/kairos.json')) as Dashboard;
  expect(d.uid).toBe('kairos');
  const ids = d.panels.map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
  const queried = d.panels.filter((p) => p.type !== 'row');
  expect(queried.length).toBeGreaterThan(15);
  for (const p of queried) {
    expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    expect(p.datasource?.uid, p.title).toBe('${datasource}');
    expect(p.targets?.length, p.title).toBeGreaterThan(0);
  }
  const exprs = queried.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const variables = d.templating.list.flatMap((v) =>
    v.definition ? [/label_values\((\w+)/.exec(v.definition)?.[1] ?? v.definition] : [],
  );
  expect(unknownIn([...exprs, ...variables])).toEqual([]);
  // What the dashboard promises to show: each of these is queried somewhere.
  const all = exprs.join('\n');
  for (const name of [
    'kairos_outbox_lag_seconds',
    'kairos_consumer_lag_messages',
    'kairos_watchdog_repairs_total',
    'kairos_watchdog_findings_total',
    'kairos_jobs',
    'kairos_dead_letters',
    'kairos_oldest_overdue_seconds',
    'kairos_jobs_due',
    'kairos_hop_lag_seconds',
    'kairos_canary_latency_seconds',
    'kairos_alert_active',
    'kairos_pg_fallback_active',
  ])
    expect(all, name).toContain(name);
  for (const name of ['kairos_http_request_duration_seconds', 'kairos_worker_handler_duration_seconds'])
    expect(all, name).toContain(name);
});

test('the alert rules query only metrics Kairos defines', () => {
  const rules = parse(read('prometheus/alerts.yml')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
  expect(exprs.length).toBeGreaterThanOrEqual(14);
  expect(unknownIn(exprs)).toEqual([]);
});

test("Grafana's provisioning loads the dashboards' folder from the Prometheus datasource", () => {
  const sources = parse(read('grafana/provisioning/datasources/prometheus.yml')) as {
    datasources: { type: string; url: string }[];
  };
  expect(sources.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
  const providers = parse(read('grafana/provisioning/dashboards/kairos.yml')) as {
    providers: { type: string; options: { path: string } }[];
  };
  expect(providers.providers[0]).toMatchObject({
    type: 'file',
    options: { path: '/var/lib/grafana/dashboards' },
  });
});

test("docker-compose's Prometheus scrapes the apps' default metrics ports, Grafana gets the same files", () => {
  const scrape = parse(read('prometheus/prometheus.compose.yml')) as {
    rule_files: string[];
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  const local = parse(prometheusConfig(stackConfigFromEnv(resolve(OPS, '..'), {}))) as typeof scrape;
  const ports = (c: typeof scrape) =>
    Object.fromEntries(
      c.scrape_configs.map((j) => [j.job_name, j.static_configs[0]?.targets[0]?.split(':')[1]]),
    );
  expect(ports(scrape)).toEqual(ports(local));
  const compose = parse(read('../docker-compose.yml')) as {
    services: Record<string, { volumes?: string[]; environment?: Record<string, string> }>;
  };
  expect(compose.services.prometheus?.volumes).toContain(
    './ops/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro',
  );
  expect(scrape.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
  expect(compose.services.grafana?.volumes).toEqual([
    './ops/grafana/provisioning:/etc/grafana/provisioning:ro',
    './ops/grafana/dashboards:/var/lib/grafana/dashboards:ro',
  ]);
  // The apps listen beyond loopback inside their containers, or nothing could scrape them.
  expect(compose.services.api?.environment).toMatchObject({ KAIROS_API_METRICS_HOST: '0.0.0.0' });
});
