import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { dirs } from '../config.js';
import { spawnDetached } from '../proc.js';
import { httpOk } from './http.js';
import type { ServiceDef } from './types.js';

export const REGISTRY_DATABASE = 'apicurio';

export const registry: ServiceDef = {
  name: 'registry',
  dependsOn: ['postgres'],
  startTimeoutMs: 120_000,
  listens: (cfg) => `http://${cfg.host}:${cfg.ports.registry}/apis/ccompat/v7`,
  healthy: (cfg) => httpOk(`http://${cfg.host}:${cfg.ports.registry}/apis/ccompat/v7/subjects`),
  start({ cfg, tools, jars, logFile, pidFile }) {
    const work = dirs(cfg).registry;
    mkdirSync(work, { recursive: true });
    return spawnDetached({
      name: 'registry',
      command: tools.registryJava,
      args: ['-Xms128m', `-Xmx${cfg.heaps.registry}`, '-jar', resolve(jars.apicurio, 'quarkus-run.jar')],
      cwd: work,
      env: {
        ...process.env,
        QUARKUS_HTTP_HOST: cfg.host,
        QUARKUS_HTTP_PORT: String(cfg.ports.registry),
        // Quarkus's management interface (health, metrics) defaults to 0.0.0.0:9000: on loopback
        // and beside the API port instead, so nothing listens outside and two stacks can coexist.
        QUARKUS_MANAGEMENT_HOST: cfg.host,
        QUARKUS_MANAGEMENT_PORT: String(cfg.ports.registryManagement),
        // Schemas persist in the stack's PostgreSQL, so ids survive registry restarts.
        APICURIO_STORAGE_KIND: 'sql',
        APICURIO_STORAGE_SQL_KIND: 'postgresql',
        APICURIO_DATASOURCE_URL: `jdbc:postgresql://${cfg.host}:${cfg.ports.postgres}/${REGISTRY_DATABASE}`,
        APICURIO_DATASOURCE_USERNAME: 'kairos',
        APICURIO_DATASOURCE_PASSWORD: 'kairos',
      },
      logFile,
      pidFile,
    });
  },
};
