import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Admin, Consumer, ConsumerConfig, Kafka, Producer, ProducerConfig } from 'kafkajs';
import pg from 'pg';
import { inject, onTestFinished } from 'vitest';
import { createKafka, deleteTopicsWithPrefix } from '@kairos/kafka';
import type { Services } from '../setup/services.js';

/**
 * A test's private slice of the shared services: a topic/group/key prefix and a PostgreSQL
 * schema. Every client it hands out is tracked; cleanup closes what is still open, deletes the
 * namespace's topics, keys and schema, and fails the test if anything had been leaked.
 */
export interface Namespace {
  readonly id: string;
  /** Prefix for topics, consumer groups, connector names and Redis keys: `t<hex>.` */
  readonly prefix: string;
  /** PostgreSQL schema owned by this test. */
  readonly schema: string;
  readonly services: Services;
  readonly kafka: Kafka;
  consumer(config?: Partial<ConsumerConfig>): Consumer;
  producer(config?: ProducerConfig): Producer;
  admin(): Admin;
  /** A pool whose connections use this test's schema as search_path. */
  pgPool(max?: number): pg.Pool;
  redis(): Redis;
  /** Registers an extra cleanup step (run before the leak check). */
  defer(step: () => Promise<void>): void;
  cleanup(): Promise<void>;
}

interface Tracked {
  readonly label: string;
  open: boolean;
  close: () => Promise<void>;
}

export async function createNamespace(label = 'test'): Promise<Namespace> {
  const services = inject('services');
  const id = randomBytes(4).toString('hex');
  const prefix = `t${id}.`;
  const schema = `t_${id}`;
  const tracked: Tracked[] = [];
  const deferred: (() => Promise<void>)[] = [];
  const kafka = createKafka({ brokers: services.kafkaBrokers.split(','), clientId: `${label}-${id}` });

  const admin = new pg.Client({ connectionString: services.pgUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.end();

  const track = (entry: Tracked) => {
    tracked.push(entry);
    return entry;
  };

  const ns: Namespace = {
    id,
    prefix,
    schema,
    services,
    kafka,
    consumer(config) {
      const c = kafka.consumer({ groupId: `${prefix}${label}`, ...config });
      const t = track({
        label: `kafka consumer ${config?.groupId ?? `${prefix}${label}`}`,
        open: true,
        close: () => c.disconnect(),
      });
      c.on(c.events.DISCONNECT, () => (t.open = false));
      return c;
    },
    producer(config) {
      const p = kafka.producer(config);
      const t = track({ label: 'kafka producer', open: true, close: () => p.disconnect() });
      p.on(p.events.DISCONNECT, () => (t.open = false));
      return p;
    },
    admin() {
      const a = kafka.admin();
      const t = track({ label: 'kafka admin', open: true, close: () => a.disconnect() });
      a.on(a.events.DISCONNECT, () => (t.open = false));
      return a;
    },
    pgPool(max = 5) {
      const pool = new pg.Pool({
        connectionString: services.pgUrl,
        max,
        options: `-c search_path=${schema},public`,
      });
      const t = track({ label: 'pg pool', open: true, close: () => pool.end() });
      const end = pool.end.bind(pool);
      pool.end = async () => {
        t.open = false;
        await end();
      };
      return pool;
    },
    redis() {
      const r = new Redis(services.redisUrl, { keyPrefix: prefix, maxRetriesPerRequest: 3 });
      const t = track({
        label: 'redis connection',
        open: true,
        close: () => Promise.resolve(r.disconnect()),
      });
      // quit() resolves before 'end' is emitted, so closing counts as closed.
      r.on('close', () => (t.open = false));
      r.on('end', () => (t.open = false));
      const quit = r.quit.bind(r);
      r.quit = async (...args: Parameters<typeof quit>) => {
        t.open = false;
        return quit(...args);
      };
      return r;
    },
    defer(step) {
      deferred.push(step);
    },
    async cleanup() {
      for (const step of deferred.reverse()) await step();
      const leaked = tracked.filter((t) => t.open);
      for (const t of leaked) await t.close().catch(() => undefined);
      await deleteTopicsWithPrefix(kafka, prefix).catch(() => undefined);
      const r = new Redis(services.redisUrl);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
          cursor = next;
          if (keys.length > 0) await r.del(...keys);
        } while (cursor !== '0');
      } finally {
        r.disconnect();
      }
      const c = new pg.Client({ connectionString: services.pgUrl });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await c.end();
      if (leaked.length > 0) {
        throw new Error(
          `test leaked ${leaked.length} connection(s): ${leaked.map((t) => t.label).join(', ')}`,
        );
      }
    },
  };
  return ns;
}

/** A namespace cleaned up (and leak-checked) when the current test finishes. */
export async function useNamespace(label?: string): Promise<Namespace> {
  const ns = await createNamespace(label);
  onTestFinished(() => ns.cleanup());
  return ns;
}
