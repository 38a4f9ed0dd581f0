import { createKafka, topicNames } from '@kairos/kafka';
import { KairosAdapter } from '../adapters/kairos.js';
import { CLASS, prefixOf } from '../adapters/kairos-common.js';
import { summarize } from '../stats.js';
import { keys, settle, StartLog, type Measurement, type Workload } from '../workload.js';

/**
 * W5 (Kairos only): where an immediate job's time goes, on the deployed apps — HTTP create sent
 * → its answer, and → job event in Kafka (API, commit, outbox, CDC) → dispatch claimed by the delay tier (PostgreSQL's
 * dispatched_at, on Redis time) → task in its Kafka topic → handler start at the worker → result
 * recorded in PostgreSQL by the tracker. p50/p99 of each hop.
 */
export const hops: Workload = {
  id: 'w5',
  title: 'W5 per-hop breakdown',
  only: ['kairos'],
  async run({ adapter, size }) {
    if (!(adapter instanceof KairosAdapter)) return [];
    const n = size === 'full' ? 2000 : 200;
    const ks = keys('w5', n);
    const sent = new Map<string, number>();
    const answered = new Map<string, number>();
    const starts = new StartLog();
    await adapter.startWorker(100, starts.onStart);
    try {
      // A steady trickle, 8 in flight, so every hop is measured unloaded rather than queued.
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < ks.length) {
            const key = ks[next++] ?? '';
            sent.set(key, Date.now());
            await adapter.enqueue([{ key, dueAtMs: null }], 'single');
            answered.set(key, Date.now());
          }
        }),
      );
      await starts.waitAll(ks, 120_000);
      await settle(2000);
    } finally {
      await adapter.stopWorker();
    }
    const rows = await jobTimes(adapter);
    const idOf = new Map(rows.map((r) => [r.key, r.id]));
    const byKey = (m: ReadonlyMap<string, number>) =>
      new Map(ks.flatMap((k) => (m.has(idOf.get(k) ?? '') ? [[k, m.get(idOf.get(k) ?? '') ?? 0]] : [])));
    const topics = topicNames(prefixOf(adapter.env));
    const appended = await appendTimes(adapter, [topics.jobEvents, topics.tasks(CLASS)]);
    const at = (col: 'dispatched' | 'recorded') => new Map(rows.map((r) => [r.key, r[col]]));
    const stages: [string, ReadonlyMap<string, number>, ReadonlyMap<string, number>][] = [
      ['HTTP create sent → answered', sent, answered],
      ['HTTP create sent → job event in Kafka', sent, byKey(appended.get(topics.jobEvents) ?? new Map())],
      ['Kafka → dispatch claimed', byKey(appended.get(topics.jobEvents) ?? new Map()), at('dispatched')],
      ['claimed → task in Kafka', at('dispatched'), byKey(appended.get(topics.tasks(CLASS)) ?? new Map())],
      [
        'task in Kafka → handler start',
        byKey(appended.get(topics.tasks(CLASS)) ?? new Map()),
        starts.firstStart,
      ],
      ['handler start → result recorded', starts.firstStart, at('recorded')],
    ];
    return stages.flatMap(([variant, from, to]) => hopRows(variant, ks, from, to));
  },
};

function hopRows(
  variant: string,
  ks: readonly string[],
  from: ReadonlyMap<string, number>,
  to: ReadonlyMap<string, number>,
): Measurement[] {
  const samples = ks.flatMap((k) => {
    const a = from.get(k);
    const b = to.get(k);
    return a !== undefined && b !== undefined ? [Math.max(0, b - a)] : [];
  });
  const s = summarize(samples);
  return (
    [
      ['p50', s.p50],
      ['p99', s.p99],
    ] as const
  ).map(([metric, value]) => ({ workload: 'W5', variant, system: 'kairos', metric, unit: 'ms', value }));
}

/** Each job's key, id, dispatch claim time and the time its result was recorded. */
async function jobTimes(adapter: KairosAdapter) {
  const { rows } = await adapter.deployment.pool.query<{
    key: string;
    id: string;
    dispatched: Date;
    recorded: Date;
  }>(
    `SELECT payload->>'key' AS key, id::text AS id, dispatched_at AS dispatched, updated_at AS recorded
       FROM jobs WHERE state = 'SUCCEEDED'`,
  );
  return rows.map((r) => ({ ...r, dispatched: r.dispatched.getTime(), recorded: r.recorded.getTime() }));
}

/** Kafka append time of every message of the topics, by message key (the job id), per topic. */
async function appendTimes(adapter: KairosAdapter, topics: readonly string[]) {
  const kafka = createKafka({ brokers: adapter.env.kafkaBrokers.split(','), clientId: 'bench-w5' });
  const admin = kafka.admin();
  await admin.connect();
  let remaining = 0;
  for (const t of topics) {
    remaining += (await admin.fetchTopicOffsets(t)).reduce((a, e) => a + Number(e.high), 0);
  }
  await admin.disconnect();
  const out = new Map<string, Map<string, number>>(topics.map((t) => [t, new Map()]));
  const consumer = kafka.consumer({ groupId: `${prefixOf(adapter.env)}w5-reader` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await new Promise<void>((done) => {
      if (remaining === 0) return done();
      void consumer.run({
        eachMessage: ({ topic, message }) => {
          const id = message.key?.toString() ?? '';
          // First append wins: a redelivered event or task is not the job's first pass.
          if (!out.get(topic)?.has(id)) out.get(topic)?.set(id, Number(message.timestamp));
          if (--remaining === 0) done();
          return Promise.resolve();
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}
