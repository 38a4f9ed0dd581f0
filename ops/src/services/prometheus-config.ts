import { resolve } from 'node:path';
import type { StackConfig } from '../config.js';

/** Where the alert rules live; the stack's Prometheus and docker-compose's load the same file. */
export const alertRulesFile = (cfg: StackConfig) => resolve(cfg.root, 'ops', 'prometheus', 'alerts.yml');

/**
 * The local stack's Prometheus configuration: the apps' metrics ports on loopback (as they read
 * them from KAIROS_*), any extra targets (worker services), and Kairos's alert rules. JSON is
 * YAML, so it is written as JSON.
 */
export function prometheusConfig(cfg: StackConfig): string {
  const { api, delayTier, tracker, ingest, extraTargets } = cfg.scrape;
  const jobs: [string, string[]][] = [
    ['kairos-api', [api]],
    ['kairos-delay-tier', [delayTier]],
    ['kairos-tracker', [tracker]],
    ['kairos-ingest', [ingest]],
  ].map(([job, ports]) => [
    job as string,
    (ports as number[]).filter((p) => p !== 0).map((p) => `${cfg.host}:${p}`),
  ]);
  jobs.push(['kairos-workers', [...extraTargets]]);
  return `${JSON.stringify(
    {
      global: { scrape_interval: '15s', evaluation_interval: '15s', scrape_timeout: '5s' },
      rule_files: [alertRulesFile(cfg)],
      scrape_configs: jobs
        .filter(([, targets]) => targets.length > 0)
        .map(([job_name, targets]) => ({ job_name, static_configs: [{ targets }] })),
    },
    null,
    2,
  )}\n`;
}
