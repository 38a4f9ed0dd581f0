import { OutboxHeartbeat } from '@kairos/tracker';
import type { Kafka } from 'kafkajs';
import { expect, test } from 'vitest';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

// The tracker's follower of the outbox connector's heartbeats on the real Kafka: it reads the
// newest beat, stops promptly (a stop waits for the fetch in flight), costs about a fetch a second
// while idle, and a heartbeat topic that does not exist yet is retried until it does.

/** A stop must return within this, ms (a fetch waits up to 1 s on the broker). */
const PROMPT_STOP_MS = 1500;

/** The namespace's Kafka client, counting its consumers' fetch requests and the admin clients made. */
function counted(ns: Namespace): { kafka: Kafka; fetches: () => number; admins: () => number } {
  let fetches = 0;
  let admins = 0;
  const kafka = Object.create(ns.kafka) as Kafka;
  kafka.consumer = (config) => {
    const c = ns.kafka.consumer(config);
    c.on(c.events.REQUEST, (e) => void (e.payload.apiName === 'Fetch' && (fetches += 1)));
    return c;
  };
  kafka.admin = (config) => ((admins += 1), ns.kafka.admin(config));
  return { kafka, fetches: () => fetches, admins: () => admins };
}

async function createTopic(ns: Namespace, topic: string): Promise<void> {
  const admin = ns.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
}

async function beat(ns: Namespace, topic: string, atMs: number): Promise<void> {
  const producer = ns.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: String(atMs) }] });
  await producer.disconnect();
}

async function timedStop(what: string, stop: () => Promise<void>): Promise<number> {
  const t = Date.now();
  await stop();
  const ms = Date.now() - t;
  console.log(`[outbox-heartbeat] ${what} stopped in ${ms} ms`);
  return ms;
}

test('the follower reads the newest beat, costs about a fetch a second while idle, and stops promptly', async () => {
  const ns = await useNamespace('heartbeat');
  const topic = `${ns.prefix}kairos.heartbeat`;
  await createTopic(ns, topic);
  await beat(ns, topic, Date.now() - 60_000);
  const k = counted(ns);
  const hb = new OutboxHeartbeat({ kafka: k.kafka, topic, retryMs: 300 });
  ns.defer(() => hb.stop());
  await hb.start();
  const started = Date.now();
  // The last beat before the start is read (a minute old), then a fresh one.
  await eventually('the old beat to be read', () => (hb.lagMs() ?? 0) >= 60_000);
  await beat(ns, topic, Date.now());
  await eventually('the fresh beat to be read', () => (hb.lagMs() ?? Infinity) < 1000);
  // Idle: no beat comes; each fetch waits its full time on the broker.
  const idleFrom = { at: Date.now(), fetches: k.fetches() };
  await eventually('a few idle fetches', () => k.fetches() - idleFrom.fetches >= 4);
  const idleMin = (Date.now() - idleFrom.at) / 60_000;
  const perMin = (k.fetches() - idleFrom.fetches) / idleMin;
  console.log(
    `[outbox-heartbeat] ${k.fetches()} fetches in ${((Date.now() - started) / 1000).toFixed(1)} s; idle: ${perMin.toFixed(0)}/min`,
  );
  expect(perMin).toBeLessThan(90);
  expect(await timedStop('follower', () => hb.stop())).toBeLessThan(PROMPT_STOP_MS);
});

test('a heartbeat topic that does not exist: retried, the lag grows, stopping stays prompt; once it exists, beats are read', async () => {
  const ns = await useNamespace('heartbeat-none');
  const topic = `${ns.prefix}kairos.heartbeat`;
  const k = counted(ns);
  const hb = new OutboxHeartbeat({ kafka: k.kafka, topic, retryMs: 300 });
  ns.defer(() => hb.stop());
  await hb.start();
  // Each try looks the topic up with an admin client: three of them are two retries.
  await eventually('two retries', () => k.admins() >= 3);
  await eventually('the lag to grow', () => (hb.lagMs() ?? 0) > 1000);
  expect(k.fetches()).toBe(0);

  await createTopic(ns, topic);
  await beat(ns, topic, Date.now());
  await eventually('the beat to be read once the topic exists', () => (hb.lagMs() ?? Infinity) < 1000);
  expect(await timedStop('follower of a late topic', () => hb.stop())).toBeLessThan(PROMPT_STOP_MS);

  // Stopped while only retrying: as prompt.
  const idle = new OutboxHeartbeat({ kafka: ns.kafka, topic: `${ns.prefix}kairos.none`, retryMs: 60_000 });
  await idle.start();
  await eventually('the lag to be known', () => (idle.lagMs() ?? -1) >= 0);
  expect(await timedStop('follower of a missing topic', () => idle.stop())).toBeLessThan(PROMPT_STOP_MS);
});

test('a tracker following the heartbeats stops promptly', async () => {
  const ns = await useNamespace('heartbeat-tracker');
  const p = await startPipeline(ns, { outboxHeartbeat: {} });
  await eventually('the outbox lag to be small', async () => {
    const m = /^kairos_outbox_lag_seconds (\S+)$/m.exec(await p.tracker.metrics.text());
    return m !== null && Number(m[1]) < 7;
  });
  expect(await timedStop('tracker', () => p.tracker.stop())).toBeLessThan(PROMPT_STOP_MS);
});

test('the heartbeat topic deleted while followed: the tail ends with the consumer error, the follower retries, the lag grows', async () => {
  const ns = await useNamespace('heartbeat-deleted');
  const topic = `${ns.prefix}kairos.heartbeat`;
  await createTopic(ns, topic);
  const k = counted(ns);
  const hb = new OutboxHeartbeat({ kafka: k.kafka, topic, retryMs: 300 });
  ns.defer(() => hb.stop());
  await hb.start();
  await beat(ns, topic, Date.now());
  await eventually('the beat to be read', () => (hb.lagMs() ?? Infinity) < 1000);
  const admin = ns.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  const deleted = { at: Date.now(), admins: k.admins() };
  // The crashed tail deletes its group (an admin client), then each retry looks the topic up (another).
  await eventually('two retries', () => k.admins() >= deleted.admins + 3, 90_000);
  console.log(`[outbox-heartbeat] topic deleted → retrying after ${Date.now() - deleted.at} ms`);
  await eventually('the lag to grow', () => (hb.lagMs() ?? 0) > 2000);
  expect(await timedStop('follower of a deleted topic', () => hb.stop())).toBeLessThan(PROMPT_STOP_MS);
});
