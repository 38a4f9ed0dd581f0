import {
  commitWhileIdle,
  createKafka,
  ensureTopics,
  GroupActiveError,
  HandoffConsumer,
  retireGroup,
  seedGroupOffsets,
  type PartitionOffset,
  type SeedLogger,
  topicNames,
} from '@kairos/kafka';
import { expect, test } from 'vitest';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

const PARTITIONS = 3;
const PER_PARTITION = 10;
/** Where group A commits on every partition of the busy topic. */
const K = 6;

/** A topic of PARTITIONS partitions holding PER_PARTITION messages each. */
async function filledTopic(ns: Namespace, name: string): Promise<string> {
  const topic = `${ns.prefix}${name}`;
  await ensureTopics(ns.kafka, [{ name: topic, partitions: PARTITIONS, configs: {}, purpose: 'test' }]);
  const producer = ns.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: PARTITIONS * PER_PARTITION }, (_, i) => ({
      partition: i % PARTITIONS,
      value: `m${i}`,
    })),
  });
  await producer.disconnect();
  return topic;
}

function noteLowest(lowest: Map<number, bigint>, partition: number, offset: bigint): void {
  const seen = lowest.get(partition);
  if (seen === undefined || offset < seen) lowest.set(partition, offset);
}

/** A started group member that notes the first offset it fetched per partition and takes everything. */
async function member(ns: Namespace, groupId: string, topic: string) {
  const first = new Map<number, bigint>();
  const consumer = new HandoffConsumer({
    kafka: ns.kafka,
    groupId,
    topics: [topic],
    take: (_topic, partition, messages) => {
      noteLowest(first, partition, BigInt(messages[0]!.offset));
      return messages.length;
    },
    onAssignment: () => undefined,
    onRebalancing: () => undefined,
  });
  ns.defer(() => consumer.stop());
  await consumer.start();
  return { consumer, first };
}

/** Deletes the test's groups once its consumers are gone (retireGroup is what is tested too). */
function retireAtEnd(ns: Namespace, ...groups: string[]): void {
  // Deferred steps run last-registered first: registered before the members, this runs after them.
  ns.defer(async () => {
    for (const g of groups) await retireGroup(ns.kafka, g);
  });
}

async function committed(ns: Namespace, groupId: string, topic: string): Promise<string[]> {
  const admin = ns.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return [...t!.partitions].sort((a, b) => a.partition - b.partition).map((p) => p.offset);
  } finally {
    await admin.disconnect();
  }
}

const everyPartition = (offset: number): PartitionOffset[] =>
  Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: '', partition, offset: String(offset) }));
const at = (topic: string, offset: number) => everyPartition(offset).map((p) => ({ ...p, topic }));
const firstOffsets = (n: number) => new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, BigInt(n)]));

test('a new group starts where the topic’s other groups committed, or at the beginning where none has', async () => {
  const ns = await useNamespace('seed');
  const busy = await filledTopic(ns, 'kairos.tasks.default');
  const quiet = await filledTopic(ns, 'kairos.tasks.quiet');
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((g) => `${ns.prefix}kairos-workers.${g}`) as [
    string,
    string,
    string,
    string,
  ];
  retireAtEnd(ns, a, b, c, d);

  // Group A reads everything and commits up to K on each partition, then leaves.
  const groupA = await member(ns, a, busy);
  await eventually('A to fetch every partition', () => groupA.first.size === PARTITIONS);
  await groupA.consumer.commit(at(busy, K));
  await groupA.consumer.stop();
  expect(await committed(ns, a, busy)).toEqual(Array(PARTITIONS).fill(String(K)));

  const b1 = await seedGroupOffsets(ns.kafka, { groupId: b, topics: [busy] });
  expect(b1.outcome).toBe('seeded');
  expect(b1.plan.offsets).toEqual(at(busy, K));
  const groupB = await member(ns, b, busy);
  await eventually('B to fetch every partition', () => groupB.first.size === PARTITIONS);
  expect(groupB.first).toEqual(firstOffsets(K));

  // Nobody has committed on the quiet topic: C reads it from the beginning.
  const c1 = await seedGroupOffsets(ns.kafka, { groupId: c, topics: [quiet] });
  expect(c1).toEqual({
    outcome: 'seeded',
    plan: { offsets: [], fromBeginning: at(quiet, 0).map(({ topic, partition }) => ({ topic, partition })) },
  });
  const groupC = await member(ns, c, quiet);
  await eventually('C to fetch every partition', () => groupC.first.size === PARTITIONS);
  expect(groupC.first).toEqual(firstOffsets(0));

  // A group's own commits stand: all of A's; D's on partition 0, the others seeded.
  expect((await seedGroupOffsets(ns.kafka, { groupId: a, topics: [busy] })).outcome).toBe('committed');
  expect(await committed(ns, a, busy)).toEqual(Array(PARTITIONS).fill(String(K)));
  await commitWhileIdle(ns.kafka, d, [{ topic: busy, partition: 0, offset: '2' }]);
  const d1 = await seedGroupOffsets(ns.kafka, { groupId: d, topics: [busy] });
  expect(d1.plan.offsets).toEqual(at(busy, K).slice(1));
  expect(await committed(ns, d, busy)).toEqual(['2', String(K), String(K)]);

  // B is running: seeding it again changes nothing, and a commit past its members is refused.
  expect((await seedGroupOffsets(ns.kafka, { groupId: b, topics: [busy] })).outcome).toBe('committed');
  await expect(commitWhileIdle(ns.kafka, b, at(busy, 0))).rejects.toBeInstanceOf(GroupActiveError);
});

test('two members of a new group starting at once both read from where the other groups are', async () => {
  const ns = await useNamespace('seed-race');
  const topic = await filledTopic(ns, 'kairos.tasks.default');
  const [a, e] = [`${ns.prefix}kairos-workers.a`, `${ns.prefix}kairos-workers.e`];
  retireAtEnd(ns, a, e);
  await commitWhileIdle(ns.kafka, a, at(topic, K));

  const debug: object[] = [];
  const logger: SeedLogger = { info: () => undefined, warn: () => undefined, debug: (o) => debug.push(o) };
  // Each as the worker starts: seed, then join.
  const start = async () => {
    const seeding = await seedGroupOffsets(ns.kafka, { groupId: e, topics: [topic], logger });
    return { seeding, ...(await member(ns, e, topic)) };
  };
  const [m1, m2] = await Promise.all([start(), start()]);
  for (const m of [m1, m2]) expect(['seeded', 'joined', 'committed']).toContain(m.seeding.outcome);
  expect(debug.length).toBe([m1, m2].filter((m) => m.seeding.outcome === 'joined').length);
  const first = new Map<number, bigint>();
  await eventually('the group to fetch every partition', () => {
    for (const m of [m1, m2]) for (const [p, o] of m.first) noteLowest(first, p, o);
    return first.size === PARTITIONS;
  });
  expect(first).toEqual(firstOffsets(K));

  // A third member joining the running group: nothing to seed.
  const third = await seedGroupOffsets(ns.kafka, { groupId: e, topics: [topic] });
  expect(['joined', 'committed']).toContain(third.outcome);
});

test("a worker of a new group starts where the class's other group committed", async () => {
  const ns = await useNamespace('seed-worker');
  const [one, two] = [`${ns.prefix}kairos-workers.one`, `${ns.prefix}kairos-workers.two`];
  retireAtEnd(ns, one, two); // before the pipeline's stop is deferred, so it runs after it
  const p = await startPipeline(ns);
  const ran = new Set<string>();
  const lines: { obj: object; msg?: string }[] = [];
  const note = (obj: object, msg?: string) => lines.push({ obj, msg });
  const logger = { info: note, warn: note, error: note, debug: note };
  const worker = (groupId: string) =>
    p.worker({ resourceClasses: ['default'], groupId, logger }).handle('seed.work', (_payload, ctx) => {
      ran.add(ctx.jobId);
      return Promise.resolve();
    });
  const first = worker(one);
  await first.start();
  const job = { tenant: 'acme', type: 'seed.work', resource_class: 'default', payload: {} };
  await p.commands.createJobs(Array.from({ length: 12 }, () => job));
  await eventually('the jobs to run', () => ran.size === 12);
  await first.stop(); // commits what finished
  const topic = topicNames(ns.prefix).tasks('default');
  const before = await committed(ns, one, topic);
  expect(before.some((o) => o !== '-1')).toBe(true);

  lines.length = 0;
  const second = worker(two);
  await second.start();
  // Seeded before it joined (not committed by it after reading the tasks again).
  const seeded = lines.find((l) => l.msg?.startsWith('new group starts where'))?.obj;
  expect(seeded).toMatchObject({
    groupId: two,
    seeded: before.flatMap((o, partition) => (o === '-1' ? [] : [`${topic}/${partition}@${o}`])),
  });
  expect(await committed(ns, two, topic)).toEqual(before);
  await second.stop();
});

test('seeding that keeps failing gives up with a warning, leaving the group as it was', async () => {
  const warnings: object[] = [];
  const logger: SeedLogger = { info: () => undefined, warn: (o) => warnings.push(o) };
  const kafka = createKafka({ brokers: ['127.0.0.1:1'], connectionTimeoutMs: 200, retry: { retries: 0 } });
  const seeding = await seedGroupOffsets(kafka, {
    groupId: 'kairos-workers.unreachable',
    topics: ['kairos.tasks.default'],
    attempts: 2,
    pauseMs: 10,
    logger,
  });
  expect(seeding).toEqual({ outcome: 'failed', plan: { offsets: [], fromBeginning: [] } });
  expect(warnings).toHaveLength(1);
});

test('retireGroup refuses a group with members, naming it and their count, and deletes it once empty', async () => {
  const ns = await useNamespace('retire');
  const topic = await filledTopic(ns, 'kairos.tasks.default');
  const g = `${ns.prefix}kairos-workers.retired`;
  const m = await member(ns, g, topic);
  await eventually('the member to fetch', () => m.first.size === PARTITIONS);
  await m.consumer.commit(at(topic, 1));

  const refused = await retireGroup(ns.kafka, g).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(GroupActiveError);
  expect(refused).toMatchObject({ group: g, members: 1 });
  expect((refused as Error).message).toContain(`group ${g} has 1 member(s)`);
  expect(await committed(ns, g, topic)).toEqual(Array(PARTITIONS).fill('1'));

  await m.consumer.stop();
  expect(await retireGroup(ns.kafka, g)).toBe(true);
  expect(await committed(ns, g, topic)).toEqual(Array(PARTITIONS).fill('-1'));
  expect(await retireGroup(ns.kafka, g)).toBe(false);
});
