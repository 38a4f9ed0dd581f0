import { resolve } from 'node:path';
import pg from 'pg';
import {
  connectorKafkaOverrides,
  deleteConnector,
  heartbeatQueryFor,
  readConnectorFiles,
  upsertConnector,
} from '@kairos/bootstrap';

export interface NamespacedConnector {
  readonly connectUrl: string;
  readonly pgUrl: string;
  /** Folder with connectors/*.json (the production configs). */
  readonly connectorsDir: string;
  /** Unique id: names the connector, its slot and its publication. Lower-case letters and digits. */
  readonly id: string;
  /** Prefix of the topics the events are routed to. */
  readonly topicPrefix: string;
  /** Schema whose outbox table is captured. */
  readonly schema: string;
  /**
   * The Kafka the connector writes to, when not the Connect worker's own: its producer and admin
   * are pointed there (Connect's client overrides). Default: the worker's Kafka.
   */
  readonly kafkaBrokers?: string;
}

/**
 * Registers the production outbox connector (connectors/kairos-outbox.json) re-pointed at one
 * schema's outbox, with its own slot and publication and topics under a prefix, so tests and
 * benchmarks run the real connector config in isolation. Returns a function that removes it.
 */
export async function registerNamespacedOutboxConnector(
  o: NamespacedConnector,
): Promise<() => Promise<void>> {
  const file = readConnectorFiles(resolve(o.connectorsDir)).find((c) => c.name === 'kairos-outbox');
  if (!file) throw new Error(`${o.connectorsDir}/kairos-outbox.json is missing`);
  const name = `${o.topicPrefix}outbox-${o.id}`;
  const slot = `kairos_${o.id}`;
  const config: Record<string, string> = {
    ...file.config,
    'topic.prefix': `${o.topicPrefix}cdc`,
    'slot.name': slot,
    'publication.name': slot,
    'table.include.list': `${o.schema}.outbox`,
    ...heartbeatQueryFor(file.config, o.schema),
    'transforms.outbox.route.topic.replacement': `${o.topicPrefix}kairos.\${routedByValue}`,
    ...(o.kafkaBrokers ? connectorKafkaOverrides(o.kafkaBrokers) : {}),
  };
  const remove = async () => {
    await deleteConnector(o.connectUrl, name);
    await dropSlot(o.pgUrl, slot);
  };
  try {
    await upsertConnector(o.connectUrl, { name, config });
  } catch (err) {
    await remove().catch(() => undefined);
    throw err;
  }
  return remove;
}

/** The slot stays active for a moment after the connector is deleted; wait (or end its holder), then drop it. */
export async function dropSlot(pgUrl: string, slot: string): Promise<void> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    for (let i = 0; i < 150; i++) {
      // Still held after 10 s (a walsender stuck in startup): end it rather than leak the slot,
      // which would keep WAL forever.
      if (i === 100) {
        await c.query(
          'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active',
          [slot],
        );
      }
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
    await c.query(`DROP PUBLICATION IF EXISTS "${slot}"`);
  } finally {
    await c.end();
  }
}
