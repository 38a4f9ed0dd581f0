import { resolve } from 'node:path';
import pg from 'pg';
import { deleteConnector, readConnectorFiles, upsertConnector } from '@kairos/ops';
import type { Namespace } from './namespace.js';

const CONNECTORS_DIR = resolve(import.meta.dirname, '..', '..', 'connectors');

/** The production outbox connector config from connectors/, as every test starts from it. */
export function productionOutboxConfig(): Record<string, string> {
  const file = readConnectorFiles(CONNECTORS_DIR).find((c) => c.name === 'kairos-outbox');
  if (!file) throw new Error('connectors/kairos-outbox.json is missing');
  return { ...file.config };
}

/**
 * Registers the production outbox connector re-pointed at the namespace: its own schema's
 * outbox table, its own slot and publication, topics under the namespace prefix. Removes the
 * connector, its slot and its publication on cleanup.
 */
export async function registerOutboxConnector(
  ns: Namespace,
  overrides: Record<string, string> = {},
): Promise<string> {
  const name = `${ns.prefix}outbox`;
  const slot = `kairos_${ns.id}`;
  const publication = `kairos_${ns.id}`;
  const config: Record<string, string> = {
    ...productionOutboxConfig(),
    'topic.prefix': `${ns.prefix}cdc`,
    'slot.name': slot,
    'publication.name': publication,
    'table.include.list': `${ns.schema}.outbox`,
    'transforms.outbox.route.topic.replacement': `${ns.prefix}kairos.\${routedByValue}`,
    ...overrides,
  };
  ns.defer(async () => {
    await deleteConnector(ns.services.connectUrl, name);
    await dropSlot(ns.services.pgUrl, slot, publication);
  });
  await upsertConnector(ns.services.connectUrl, { name, config });
  return name;
}

/** The slot stays active for a moment after the connector is deleted; wait, then drop it. */
async function dropSlot(pgUrl: string, slot: string, publication: string): Promise<void> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const r = await c.query<{ active: boolean }>(
        'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
        [slot],
      );
      if (r.rowCount === 0) break;
      if (!r.rows[0]?.active) {
        await c.query('SELECT pg_drop_replication_slot($1)', [slot]);
        break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    await c.query(`DROP PUBLICATION IF EXISTS "${publication}"`);
  } finally {
    await c.end();
  }
}
