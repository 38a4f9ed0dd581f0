import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { dirs } from '../config.js';
import { spawnDetached } from '../proc.js';
import { httpOk } from './http.js';
import { prometheusConfig } from './prometheus-config.js';
import type { ServiceDef } from './types.js';

/**
 * Prometheus (optional: `up --with prometheus`), scraping the local apps and evaluating the alert
 * rules. Modest by design: two days of data, a soft memory limit of 256 MiB for the Go runtime.
 */
export const prometheus: ServiceDef = {
  name: 'prometheus',
  dependsOn: [],
  startTimeoutMs: 30_000,
  listens: (cfg) => `http://${cfg.host}:${cfg.ports.prometheus}`,
  healthy: (cfg) => httpOk(`http://${cfg.host}:${cfg.ports.prometheus}/-/ready`),
  start({ cfg, tools, logFile, pidFile }) {
    const dir = dirs(cfg).prometheus;
    mkdirSync(resolve(dir, 'data'), { recursive: true });
    // Written at every start: the apps' ports may have changed since the last one.
    const config = resolve(dir, 'prometheus.yml');
    writeFileSync(config, prometheusConfig(cfg));
    return spawnDetached({
      name: 'prometheus',
      command: tools.prometheus,
      args: [
        `--config.file=${config}`,
        `--storage.tsdb.path=${resolve(dir, 'data')}`,
        '--storage.tsdb.retention.time=2d',
        `--web.listen-address=${cfg.host}:${cfg.ports.prometheus}`,
      ],
      cwd: dir,
      env: { ...process.env, GOMEMLIMIT: '256MiB' },
      logFile,
      pidFile,
    });
  },
};
