import pg from 'pg';
import type { StackConfig } from './config.js';
import { REGISTRY_DATABASE } from './services/index.js';

/** Creates the Kairos and registry databases if missing (idempotent). */
export async function ensureDatabases(cfg: StackConfig): Promise<void> {
  const client = new pg.Client({
    host: cfg.host,
    port: cfg.ports.postgres,
    user: 'kairos',
    database: 'postgres',
  });
  await client.connect();
  try {
    for (const db of ['kairos', REGISTRY_DATABASE]) {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE "${db}"`);
    }
  } finally {
    await client.end();
  }
}
