import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Namespace } from './namespace.js';
import { eventually } from './pipeline.js';

const RULES = resolve(import.meta.dirname, '../../ops/prometheus/alerts.yml');

/** An alert as Prometheus's `/api/v1/alerts` lists it. */
export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
  readonly value: string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A real Prometheus (Debian's `prometheus`) of the test's own, evaluating Kairos's alert rules
 * (ops/prometheus/alerts.yml) every second over `targets` (host:port of apps' /metrics) scraped
 * every second; stopped and its data removed when the namespace cleans up.
 */
export async function startPrometheus(
  ns: Namespace,
  targets: readonly string[],
): Promise<{ url: string; alerts(): Promise<PromAlert[]> }> {
  const dir = mkdtempSync(join(tmpdir(), `prom-${ns.id}-`));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'kairos', static_configs: [{ targets }] }],
    }),
  );
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore', env: { ...process.env, GOMEMLIMIT: '128MiB' } },
  );
  ns.defer(async () => {
    const gone = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.kill('SIGTERM');
    await gone;
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    'Prometheus to be ready',
    async () => (await fetch(`${url}/-/ready`).catch(() => null))?.ok === true,
    30_000,
  );
  return {
    url,
    async alerts() {
      const res = await fetch(`${url}/api/v1/alerts`);
      return ((await res.json()) as { data: { alerts: PromAlert[] } }).data.alerts;
    },
  };
}
