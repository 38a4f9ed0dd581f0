import { randomBytes } from 'node:crypto';
import { deleteTopicsWithPrefix, createKafka } from '@kairos/kafka';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { HarnessServices, NamespaceSpec } from '../namespace-setup.js';

/** The resource classes a drill's namespace has (its probes run one job of each). */
export const DRILL_CLASSES = ['critical', 'default', 'io'] as const;

/** A fresh namespace of its own for one run of a drill: `drill<hex>.` topics and keys, schema `drill_<hex>`. */
export function drillNamespace(services: HarnessServices): NamespaceSpec {
  const hex = randomBytes(4).toString('hex');
  return {
    services,
    id: `drill${hex}`,
    prefix: `drill${hex}.`,
    schema: `drill_${hex}`,
    resourceClasses: DRILL_CLASSES,
  };
}

/** Deletes what a drill's namespace left in the services: its topics, Redis keys and schema. */
export async function purgeNamespace(ns: NamespaceSpec): Promise<void> {
  const kafka = createKafka({ brokers: ns.services.kafkaBrokers.split(','), clientId: `${ns.id}-purge` });
  await deleteTopicsWithPrefix(kafka, ns.prefix);
  const redis = new Redis(ns.services.redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${ns.prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  const client = new pg.Client({ connectionString: ns.services.pgUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(ns.schema)} CASCADE`);
  } finally {
    await client.end();
  }
}
