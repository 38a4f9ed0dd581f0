import type { StackConfig } from './config.js';
import { REGISTRY_DATABASE } from './services/index.js';
import { adminClient } from './services/postgres.js';
import { ensurePostgresTls } from './services/postgres-tls.js';

/** Creates the Kairos and registry databases if missing, and turns TLS on (idempotent). */
export async function ensureDatabases(cfg: StackConfig): Promise<void> {
  const client = adminClient(cfg);
  await client.connect();
  try {
    for (const db of ['kairos', REGISTRY_DATABASE]) {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE "${db}"`);
    }
    await ensurePostgresTls(cfg, client);
  } finally {
    await client.end();
  }
}
