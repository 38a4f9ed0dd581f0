import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { targetConnector } from '../src/bootstrap.js';
import { readConnectorFiles } from '../src/connectors.js';

const FILE = {
  name: 'kairos-outbox',
  config: {
    'database.hostname': '${env:KAIROS_PG_HOST}',
    'database.port': '${env:KAIROS_PG_PORT}',
    'database.user': 'kairos',
    'database.password': 'kairos',
    'database.dbname': 'kairos',
    'topic.prefix': 'kairos-cdc',
    'slot.name': 'kairos_outbox',
    'publication.name': 'kairos_outbox',
    'table.include.list': 'public.outbox',
    'transforms.outbox.route.topic.replacement': 'kairos.${routedByValue}',
  },
};
const base = {
  kafkaBrokers: 'k:9092',
  connectUrl: 'http://c',
  pgUrl: 'postgres://x',
  connectorsDir: '.',
  jobEventPartitions: 8,
};

describe('the outbox connector aimed at a bootstrap target', () => {
  test('the default target keeps the file as it is', () => {
    expect(targetConnector(FILE, base)).toEqual(FILE);
  });

  test('a schema gets its own slot and publication; a prefix its own names and topics', () => {
    const c = targetConnector(FILE, { ...base, schema: 'Billing', topicPrefix: 'prod.' });
    expect(c.name).toBe('prod.kairos-outbox');
    expect(c.config).toMatchObject({
      'table.include.list': 'Billing.outbox',
      'slot.name': 'kairos_outbox_billing',
      'publication.name': 'kairos_outbox_billing',
      'topic.prefix': 'prod.kairos-cdc',
      'transforms.outbox.route.topic.replacement': 'prod.kairos.${routedByValue}',
    });
  });

  test('the database as Connect reaches it replaces the placeholders', () => {
    const c = targetConnector(FILE, {
      ...base,
      connectPgUrl: 'postgres://cdc:p%40ss@db.internal:6432/kairos_prod',
    });
    expect(c.config).toMatchObject({
      'database.hostname': 'db.internal',
      'database.port': '6432',
      'database.user': 'cdc',
      'database.password': 'p@ss',
      'database.dbname': 'kairos_prod',
    });
    expect(() => targetConnector(FILE, { ...base, connectPgUrl: 'mysql://db/x' })).toThrow(
      /must be postgres:\/\//,
    );
  });

  test("a Kafka other than the Connect workers' own gets the producer and admin overrides", () => {
    const c = targetConnector(FILE, { ...base, connectKafkaBrokers: 'b1:9092,b2:9092,b3:9092' });
    expect(c.config).toMatchObject({
      'producer.override.bootstrap.servers': 'b1:9092,b2:9092,b3:9092',
      'admin.override.bootstrap.servers': 'b1:9092,b2:9092,b3:9092',
    });
    expect(() => targetConnector(FILE, { ...base, connectKafkaBrokers: ' ' })).toThrow(/must not be empty/);
  });

  // The production file, whose heartbeat action query writes to the outbox it captures.
  const real = readConnectorFiles(resolve(import.meta.dirname, '../../../connectors'))[0]!;

  test('aimed at a schema, the heartbeats are written to the outbox it captures', () => {
    const c = targetConnector(real, { ...base, schema: 'Billing' });
    expect(c.config['table.include.list']).toBe('Billing.outbox');
    const q = c.config['heartbeat.action.query'] ?? '';
    expect(q.split('"Billing".outbox')).toHaveLength(3);
    expect(q).not.toContain('public.outbox');
  });

  test('the production file aimed at the default target keeps its heartbeat query as it is', () => {
    expect(targetConnector(real, base)).toEqual(real);
  });
});
