import pg from 'pg';
import { deleteConnector, upsertConnector } from '@kairos/ops';
import type { Namespace } from './namespace.js';

export interface OutboxConnectorOptions {
  /** Table the connector captures, schema-qualified (e.g. `t1234.outbox`). */
  readonly table: string;
  /** Extra or overriding connector config. */
  readonly overrides?: Record<string, string>;
}

/**
 * Registers a Debezium PostgreSQL connector private to the namespace (own slot and publication)
 * and removes it, its slot and its publication on cleanup.
 */
export async function registerOutboxConnector(ns: Namespace, opts: OutboxConnectorOptions): Promise<string> {
  const name = `${ns.prefix}outbox`;
  const slot = `kairos_${ns.id}`;
  const publication = `kairos_${ns.id}`;
  const url = new URL(ns.services.pgUrl);
  const config: Record<string, string> = {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'plugin.name': 'pgoutput',
    'database.hostname': url.hostname,
    'database.port': url.port || '5432',
    'database.user': decodeURIComponent(url.username),
    'database.password': decodeURIComponent(url.password),
    'database.dbname': url.pathname.slice(1),
    'topic.prefix': `${ns.prefix}cdc`,
    'slot.name': slot,
    'publication.name': publication,
    'publication.autocreate.mode': 'filtered',
    'table.include.list': opts.table,
    'snapshot.mode': 'no_data',
    'tombstones.on.delete': 'false',
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.converters.ByteArrayConverter',
    transforms: 'outbox',
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.route.by.field': 'aggregatetype',
    'transforms.outbox.route.topic.replacement': `${ns.prefix}\${routedByValue}`,
    'transforms.outbox.table.field.event.key': 'aggregateid',
    'transforms.outbox.table.expand.json.payload': 'false',
    ...opts.overrides,
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
