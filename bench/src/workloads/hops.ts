import { KairosAdapter } from '../adapters/kairos.js';
import { summarize } from '../stats.js';
import { keys, settle, StartLog, type Measurement, type Workload } from '../workload.js';

/**
 * W5 (Kairos only): where an immediate job's time goes — outbox commit → Kafka (CDC) → hot set →
 * dispatch → handler start → result recorded in PostgreSQL. p50/p99 of each hop.
 */
export const hops: Workload = {
  id: 'w5',
  title: 'W5 per-hop breakdown',
  only: ['kairos'],
  async run({ adapter, size }) {
    if (!(adapter instanceof KairosAdapter)) return [];
    const p = adapter.pipeline;
    const n = size === 'full' ? 2000 : 200;
    const ks = keys('w5', n);
    const committed = new Map<string, number>();
    const hot = new Map<string, number>();
    const dispatched = new Map<string, number>();
    adapter.onScheduled = (k, at) => hot.set(k, at);
    adapter.onDispatched = (k, at) => dispatched.set(k, at);
    const starts = new StartLog();
    await adapter.startWorker(100, starts.onStart);
    try {
      // A steady trickle, 8 in flight, so every hop is measured unloaded rather than queued.
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < ks.length) {
            const key = ks[next++] ?? '';
            await adapter.enqueue([{ key, dueAtMs: null }], 'single');
            committed.set(key, Date.now());
          }
        }),
      );
      await starts.waitAll(ks, 120_000);
      await settle(2000);
    } finally {
      await adapter.stopWorker();
      adapter.onScheduled = undefined;
      adapter.onDispatched = undefined;
    }
    // Kafka append time of each job event, and when the tracker recorded each result.
    const kafkaAt = new Map<string, number>();
    const consumer = p.kafka.consumer({ groupId: `${p.topics.jobEvents}.w5-reader` });
    const admin = p.kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(p.topics.jobEvents);
    await admin.disconnect();
    let remaining = ends.reduce((a, e) => a + Number(e.high), 0);
    await consumer.connect();
    await consumer.subscribe({ topic: p.topics.jobEvents, fromBeginning: true });
    await new Promise<void>((done) => {
      if (remaining === 0) return done();
      void consumer.run({
        eachMessage: async ({ message }) => {
          const e = (await p.codec.decode(p.topics.jobEvents, message.value ?? Buffer.alloc(0))) as {
            payload: string;
          };
          kafkaAt.set((JSON.parse(e.payload) as { key: string }).key, Number(message.timestamp));
          if (--remaining === 0) done();
        },
      });
    });
    await consumer.disconnect();
    const recorded = new Map(
      (
        await p.pool.query<{ key: string; at: Date }>(
          `SELECT payload->>'key' AS key, updated_at AS at FROM jobs WHERE state = 'SUCCEEDED'`,
        )
      ).rows.map((r) => [r.key, r.at.getTime()]),
    );
    const stages: [string, Map<string, number>, Map<string, number>][] = [
      ['commit → Kafka (CDC)', committed, kafkaAt],
      ['Kafka → hot set', kafkaAt, hot],
      ['hot set → dispatch', hot, dispatched],
      ['dispatch → handler start', dispatched, starts.firstStart],
      ['handler start → result recorded', starts.firstStart, recorded],
    ];
    const out: Measurement[] = [];
    for (const [variant, from, to] of stages) {
      const samples = ks.flatMap((k) => {
        const a = from.get(k);
        const b = to.get(k);
        return a !== undefined && b !== undefined ? [Math.max(0, b - a)] : [];
      });
      const s = summarize(samples);
      for (const [metric, value] of [
        ['p50', s.p50],
        ['p99', s.p99],
      ] as const) {
        out.push({ workload: 'W5', variant, system: 'kairos', metric, unit: 'ms', value });
      }
    }
    return out;
  },
};
