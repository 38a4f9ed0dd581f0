import { resolve } from 'node:path';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { createKafka, deleteTopicsWithPrefix, HEADERS } from '@kairos/kafka';
import {
  crashKafkaClusterNode,
  down,
  kafkaClusterBrokers,
  releaseKafkaClusterNode,
  stackConfigFromEnv,
  upOptional,
  type StackConfig,
} from '@kairos/ops';
import type { TaskContext } from '@kairos/worker-sdk';
import { useNamespace } from '../support/namespace.js';
import { allSucceeded, createJobBatch } from '../support/job-batches.js';
import { eventually, RESOURCE_CLASSES, startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * The whole pipeline on the local stack's three-broker Kafka (`up --with kafka-cluster`): every
 * topic three copies with min.insync.replicas=2, the outbox connector (on the stack's Connect)
 * writing there, and one broker SIGKILLed and held down under load. Needs the local stack (it
 * kills one of its processes); skipped when the services come from elsewhere.
 */

const root = resolve(import.meta.dirname, '..', '..');
const log = (line: string) => console.log(`[kafka-cluster] ${line}`);
const onLocalStack = inject('services').source === 'local stack';
/**
 * The broker kill runs only when asked (`npm run test:cluster` sets KAIROS_CLUSTER_FAULTS=1): it
 * has passed 30 runs in a row since `completeSends` (0 lost, early or doubled), but its pause
 * bound has little margin (longest 14.8 s of 16: workers' consumers crash on the moving group
 * coordinator and rejoin), and a CI run that fails on timing lands nothing.
 */
const faultsAsked = process.env.KAIROS_CLUSTER_FAULTS === '1';
const cfg: StackConfig = stackConfigFromEnv(root, { ...process.env, KAIROS_STACK_WITH: 'kafka-cluster' });
/** The broker's fencing after its last heartbeat (broker.session.timeout.ms of the service). */
const BROKER_SESSION_MS = 4000;
/** How long the killed broker stays down: long enough that the two others carry the load alone. */
const HOLD_DOWN_MS = 15_000;

let startedHere = false;
let kafka: Kafka;

beforeAll(async () => {
  if (!onLocalStack) return;
  const states = await upOptional(cfg, log);
  startedHere = states.some((s) => s.name === 'kafka-cluster' && s.action === 'started');
  kafka = createKafka({ brokers: kafkaClusterBrokers(cfg).split(','), clientId: 'kafka-cluster-test' });
});

afterAll(async () => {
  // A cluster a developer started is left running; one started for this file is stopped.
  if (startedHere) await down(cfg, log, ['kafka-cluster']);
});

interface Run {
  readonly p: Pipeline;
  /** Every task message a consumer of its own saw, by job id (for a failure's diagnosis). */
  readonly seen: Map<string, string[]>;
  /** Start time of each job's run (ms); a second run or one before its due time is recorded too. */
  readonly starts: Map<string, number[]>;
  readonly early: string[];
  readonly dueAt: Map<string, number>;
}

async function onCluster(label: string, o: { outboxRelay?: boolean } = {}): Promise<Run> {
  const ns = await useNamespace(label);
  const brokers = kafkaClusterBrokers(cfg);
  // Registered first, so it runs after the pipeline has stopped.
  ns.defer(() => deleteTopicsWithPrefix(kafka, ns.prefix).then(() => undefined));
  const p = await startPipeline(ns, {
    services: {
      kafkaBrokers: brokers,
      connectorBrokers: brokers,
      topicReplication: { factor: 3, minInsync: 2 },
    },
    ...o,
  });
  const run: Run = { p, seen: new Map(), starts: new Map(), early: [], dueAt: new Map() };
  const witness = kafka.consumer({ groupId: `${ns.prefix}witness` });
  ns.defer(() => witness.disconnect());
  await witness.connect();
  await witness.subscribe({ topics: RESOURCE_CLASSES.map((c) => p.topics.tasks(c)), fromBeginning: true });
  await witness.run({
    eachMessage: ({ topic, partition, message }) => {
      const id = message.headers?.[HEADERS.jobId]?.toString() ?? '?';
      const at = `${topic.slice(ns.prefix.length)}/${partition}@${message.offset}`;
      run.seen.set(id, [...(run.seen.get(id) ?? []), at]);
      return Promise.resolve();
    },
  });
  const worker = p.worker({ resourceClasses: RESOURCE_CLASSES, concurrency: 20, shutdownTimeoutMs: 500 });
  worker.handle('cluster.work', (_payload: unknown, ctx: TaskContext) => {
    const now = Date.now();
    if (now < ctx.dueAt.getTime()) run.early.push(ctx.jobId);
    run.starts.set(ctx.jobId, [...(run.starts.get(ctx.jobId) ?? []), now]);
  });
  await worker.start();
  return run;
}

async function createJobs(run: Run, n: number, dueAt: (i: number) => number): Promise<string[]> {
  const created = await createJobBatch(run.p, 'cluster.work', n, dueAt);
  for (const r of created) run.dueAt.set(r.job.id, r.job.dueAt.getTime());
  return created.map((r) => r.job.id);
}

/** The node leading the most partitions of the namespace's topics: its death moves the most leaders. */
async function busiestLeader(prefix: string): Promise<{ node: number; leads: number; of: number }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    const meta = await admin.fetchTopicMetadata({ topics });
    const leads = new Map<number, number>();
    const partitions = meta.topics.flatMap((t) => t.partitions);
    for (const part of partitions) leads.set(part.leader, (leads.get(part.leader) ?? 0) + 1);
    const [node, n] = [...leads.entries()].sort((a, b) => b[1] - a[1])[0] ?? [1, 0];
    return { node, leads: n, of: partitions.length };
  } finally {
    await admin.disconnect();
  }
}

test.skipIf(!onLocalStack)(
  'every topic has three copies and min.insync.replicas=2, and the outbox connector alone carries jobs there',
  async () => {
    // No relay: every job event reaches the cluster through Debezium (the stack's Connect, its
    // producer pointed at the cluster), so this also shows the connector writes there.
    const run = await onCluster('kcluster-topics', { outboxRelay: false });
    const { p } = run;
    await allSucceeded(p, await createJobs(run, 30, () => Date.now()));
    const admin = kafka.admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(p.ns.prefix));
      expect(topics).toContain(p.topics.jobEvents);
      const meta = await admin.fetchTopicMetadata({ topics });
      const copies = new Set(meta.topics.flatMap((t) => t.partitions.map((x) => x.replicas.length)));
      expect([...copies]).toEqual([3]);
      const configs = await admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas'] })),
      });
      const isr = new Set(configs.resources.map((r) => r.configEntries[0]?.configValue));
      expect([...isr]).toEqual(['2']);
    } finally {
      await admin.disconnect();
    }
  },
);

/**
 * Where the task messages of `ids` are in the namespace's task topics on the cluster, and what
 * the consumer groups committed there: tells a task lost in Kafka from one a worker skipped.
 */
async function whereAreTasks(prefix: string, ids: ReadonlySet<string>): Promise<string> {
  const admin = kafka.admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}kairos.tasks.`));
  const ends = new Map<string, bigint>();
  for (const t of topics)
    for (const o of await admin.fetchTopicOffsets(t)) ends.set(`${t}/${o.partition}`, BigInt(o.high));
  const groups = (await admin.listGroups()).groups.filter((g) => g.groupId.startsWith(prefix));
  const committed = await Promise.all(
    groups.map(async (g) => {
      const offsets = await admin.fetchOffsets({ groupId: g.groupId, topics });
      const parts = offsets.flatMap((t) =>
        t.partitions.map((p) => `${t.topic.slice(prefix.length)}/${p.partition}@${p.offset}`),
      );
      return `${g.groupId}: ${parts.join(' ')}`;
    }),
  );
  await admin.disconnect();
  const found: string[] = [];
  const remaining = new Set([...ends].filter(([, high]) => high > 0n).map(([k]) => k));
  const consumer = kafka.consumer({ groupId: `${prefix}diagnosis` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await new Promise<void>((done, fail) => {
      if (remaining.size === 0) return done();
      consumer
        .run({
          eachMessage: ({ topic, partition, message }) => {
            const id = message.headers?.[HEADERS.jobId]?.toString();
            if (id !== undefined && ids.has(id))
              found.push(`${id} at ${topic.slice(prefix.length)}/${partition}@${message.offset}`);
            const key = `${topic}/${partition}`;
            if (BigInt(message.offset) + 1n >= (ends.get(key) ?? 0n)) remaining.delete(key);
            if (remaining.size === 0) done();
            return Promise.resolve();
          },
        })
        .catch(fail);
    });
  } finally {
    await consumer.disconnect();
  }
  return `tasks found: ${found.join(', ') || 'none'}; committed: ${committed.join('; ')}`;
}

/** The longest stretch with no job started, between two instants, given every start time. */
function longestPause(startTimes: readonly number[], fromMs: number, toMs: number): number {
  const inside = [fromMs, ...startTimes.filter((t) => t > fromMs && t < toMs), toMs].sort((a, b) => a - b);
  return Math.max(...inside.slice(1).map((t, i) => t - (inside[i] ?? t)));
}

test.skipIf(!onLocalStack || !faultsAsked)(
  'a broker SIGKILLed and held down under load: every job runs once, none early, and work pauses no longer than the failover',
  async () => {
    const run = await onCluster('kcluster-kill');
    const t0 = Date.now();
    // 50 jobs/s due from 3 s to 45 s; more are created while the broker is down.
    const ids = await createJobs(run, 2100, (i) => t0 + 3000 + i * 20);
    await eventually('the first jobs to run', () => run.starts.size > 100, 60_000);
    const victim = await busiestLeader(run.p.ns.prefix);
    const killedAt = Date.now();
    await crashKafkaClusterNode(cfg, victim.node, { hold: true });
    log(`SIGKILLed node ${victim.node} (leader of ${victim.leads} of ${victim.of} partitions)`);
    const during = await createJobs(run, 300, (i) => Date.now() + 2000 + i * 10);
    await eventually('the hold-down to pass', () => Date.now() - killedAt > HOLD_DOWN_MS, 60_000);
    releaseKafkaClusterNode(cfg, victim.node);
    const all = [...ids, ...during];
    await allSucceeded(run.p, all, 180_000).catch(async (err: unknown) => {
      const { rows } = await run.p.pool.query<{ state: string; n: number }>(
        'SELECT state, count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) GROUP BY 1',
        [all],
      );
      const started = all.filter((id) => run.starts.has(id)).length;
      const stuck = await run.p.pool.query<{ id: string }>(
        `SELECT id, state, fence, attempt, shard, due_at, updated_at FROM jobs
           WHERE id = ANY($1::uuid[]) AND state <> 'SUCCEEDED'`,
        [all],
      );
      const where = await whereAreTasks(run.p.ns.prefix, new Set(stuck.rows.map((r) => r.id)));
      const witnessed = stuck.rows.map((r) => `${r.id}: ${run.seen.get(r.id)?.join(' ') ?? 'never'}`);
      throw new Error(
        `${String(err)}; states ${JSON.stringify(rows)}; ${started} of ${all.length} started by a worker; ` +
          `not succeeded: ${JSON.stringify(stuck.rows)}; ${where}; seen while running: ${witnessed.join('; ')}`,
      );
    });

    const starts = [...run.starts.values()].flat();
    const pause = longestPause(starts, killedAt, killedAt + HOLD_DOWN_MS);
    const late = all
      .map((id) => (run.starts.get(id)?.[0] ?? 0) - (run.dueAt.get(id) ?? 0))
      .sort((a, b) => a - b);
    log(
      `jobs ${all.length}; longest pause in job starts while the broker was down: ${pause} ms; ` +
        `lateness p50 ${late[Math.floor(late.length * 0.5)]} ms, p99 ${late[Math.floor(late.length * 0.99)]} ms, max ${late.at(-1)} ms`,
    );
    expect(run.early).toEqual([]);
    expect(all.filter((id) => run.starts.get(id)?.length !== 1)).toEqual([]);
    // Fencing (4 s), leader election, the clients' metadata refresh and retry backoff: bounded
    // by a few sessions, never by the hold-down (the other two brokers carry on).
    expect(pause).toBeLessThan(BROKER_SESSION_MS * 4);
  },
  420_000,
);
