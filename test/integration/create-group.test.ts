import { expect, test } from 'vitest';
import { JobCommands } from '@kairos/commands';
import { compileJobLimits } from '@kairos/core';
import { createPool } from '@kairos/db';
import { AvroCodec, createRegistryClient, headerString, HEADERS } from '@kairos/kafka';
import type { JobEventRecord } from '@kairos/schemas';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

interface Created {
  readonly status: number;
  readonly body: {
    id: string;
    code?: string;
    payload: { n: number };
    idempotency_key: string | null;
    due_at: string;
    shard: number;
  };
}

interface Published {
  readonly partition: number;
  readonly key: string | undefined;
  readonly traceparent: string | undefined;
  readonly jobIdHeader: string | undefined;
  /** Sent by the outbox relay (the other copy is Debezium's). */
  readonly relayed: boolean;
  readonly event: JobEventRecord;
}

const dueAt = new Date(Date.now() + 3600_000).toISOString();
/** Each create its own trace context, to see that its event carries its own and no other's. */
// n + 1: an all-zero trace id is invalid (treated as none).
const traceOf = (n: number) => `00-${(n + 1).toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;
const body = (n: number, extra: Record<string, unknown> = {}) => ({
  tenant: 'acme',
  type: 'report.build',
  resource_class: 'default',
  payload: { n },
  due_at: dueAt,
  ...extra,
});

async function post(p: Pipeline, n: number, json: unknown): Promise<Created> {
  const res = await fetch(`${p.apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: traceOf(n),
      authorization: `Bearer ${p.apiKey}`,
    },
    body: JSON.stringify(json),
  });
  return { status: res.status, body: (await res.json()) as Created['body'] };
}

/** Every message of the namespace's job-events topic from the beginning, decoded, by job id. */
async function followJobEvents(p: Pipeline): Promise<Map<string, Published[]>> {
  const byJob = new Map<string, Published[]>();
  const consumer = p.ns.consumer({ groupId: `${p.ns.prefix}create-group-reader` });
  await consumer.connect();
  await consumer.subscribe({ topic: p.topics.jobEvents, fromBeginning: true });
  p.ns.defer(() => consumer.disconnect());
  void consumer.run({
    eachMessage: async ({ partition, message }) => {
      const event = (await p.codec.decode(p.topics.jobEvents, message.value!)) as JobEventRecord;
      const list = byJob.get(event.job_id) ?? [];
      list.push({
        partition,
        key: message.key?.toString(),
        traceparent: headerString(message.headers, HEADERS.traceparent),
        jobIdHeader: headerString(message.headers, HEADERS.jobId),
        relayed: headerString(message.headers, HEADERS.relay) !== undefined,
        event,
      });
      byJob.set(event.job_id, list);
    },
  });
  return byJob;
}

/** Distinct inserting transactions (xmin) of these jobs: PostgreSQL's own count of the commits. */
async function transactionsOf(p: Pipeline, ids: readonly string[]): Promise<number> {
  const r = await p.pool.query<{ n: number }>(
    'SELECT count(DISTINCT xmin::text)::int AS n FROM jobs WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return r.rows[0]!.n;
}

test('concurrent single creates share transactions; each caller gets its own answer or error; every event reaches Kafka once', async () => {
  const p = await startPipeline(await useNamespace('create-group'));
  const published = await followJobEvents(p);
  // A real constraint one member can break: the group it joined fails as a whole.
  await p.pool.query(`ALTER TABLE jobs ADD CONSTRAINT create_group_poison CHECK (NOT payload ? 'poison')`);
  const stats0 = p.commands.createGroupStats;

  // 1. 150 concurrent creates (every fifth with a key, every tenth invalid): grouped.
  const N = 150;
  const replies = await Promise.all(
    Array.from({ length: N }, (_, n) =>
      post(
        p,
        n,
        n % 10 === 9
          ? body(n, { resource_class: 'gpu' })
          : body(n, n % 5 === 0 ? { idempotency_key: `k${n}` } : {}),
      ),
    ),
  );
  const ok = replies.flatMap((r, n) => (n % 10 === 9 ? [] : [{ n, ...r }]));
  expect(ok.map((r) => r.status)).toEqual(ok.map(() => 201));
  expect(ok.map((r) => r.body.payload.n)).toEqual(ok.map((r) => r.n)); // each its own job
  expect(new Set(ok.map((r) => r.body.id)).size).toBe(ok.length);
  // Invalid input is its caller's 400, before any I/O: it never joined a group.
  for (const [n, r] of replies.entries())
    if (n % 10 === 9) expect([r.status, r.body.code]).toEqual([400, 'VALIDATION']);
  const stats1 = p.commands.createGroupStats;
  expect(stats1.members - stats0.members).toBe(ok.length);
  expect(stats1.writes - stats0.writes).toBeLessThan(ok.length);
  expect(
    await transactionsOf(
      p,
      ok.map((r) => r.body.id),
    ),
  ).toBeLessThan(ok.length);

  // 2. One member's database failure (the CHECK) fails its group; the members are retried alone,
  // so only the poisoned ones get an error (500, as a single create breaking it always did).
  const M = 60;
  const poisoned = (n: number) => n % 12 === 0;
  const second = await Promise.all(
    Array.from({ length: M }, (_, i) => {
      const n = 1000 + i;
      return post(
        p,
        n,
        body(n, poisoned(i) ? { payload: { n, poison: true } } : { idempotency_key: `m${n}` }),
      );
    }),
  );
  for (const [i, r] of second.entries()) {
    if (poisoned(i)) expect([r.status, r.body.code]).toEqual([500, 'INTERNAL']);
    else
      expect([r.status, r.body.payload.n, r.body.idempotency_key]).toEqual([201, 1000 + i, `m${1000 + i}`]);
  }
  const stats2 = p.commands.createGroupStats;
  expect(stats2.retriedAlone - stats1.retriedAlone).toBeGreaterThan(1); // a group of several failed
  const good = second.filter((_, i) => !poisoned(i));

  // 3. Concurrent creates of one key, over HTTP (across groups) and in one turn (one group):
  // one job, created once; the others answer with it.
  const racers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => post(p, 2000 + i, body(2000 + i, { idempotency_key: 'same' }))),
  );
  expect(racers.filter((r) => r.status === 201)).toHaveLength(1);
  expect(racers.filter((r) => r.status === 200)).toHaveLength(29);
  const winner = racers.find((r) => r.status === 201)!.body;
  expect(new Set(racers.map((r) => r.body.id))).toEqual(new Set([winner.id]));
  expect(racers.every((r) => r.body.payload.n === winner.payload.n)).toBe(true);
  const stats3 = p.commands.createGroupStats;
  const oneTurn = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      p.commands.createJob(body(3000 + i, { idempotency_key: i < 4 ? 'turn' : 'same' })),
    ),
  );
  expect(p.commands.createGroupStats.writes - stats3.writes).toBe(1);
  expect(oneTurn.map((r) => r.created)).toEqual([true, false, false, false, false, false, false, false]);
  expect(new Set(oneTurn.slice(0, 4).map((r) => r.job.id)).size).toBe(1);
  expect(oneTurn.slice(4).map((r) => r.job.id)).toEqual([winner.id, winner.id, winner.id, winner.id]);
  const keys = await p.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE idempotency_key IN ('same', 'turn')`,
  );
  expect(keys.rows[0]!.n).toBe(2);

  // 4. Every job created has exactly one JobScheduled event on Kafka (sent twice: relay, Debezium), keyed by its routing key in
  // its shard's partition, carrying its own caller's trace context (a job created without one: a
  // new trace); nothing else was published.
  const view = (b: Created['body'], trace: string | undefined) => ({ ...b, trace });
  const turn = oneTurn[0]!.job;
  const jobs = [
    ...ok.map((r) => view(r.body, traceOf(r.n))),
    ...good.map((r) => view(r.body, traceOf(r.body.payload.n))),
    view(winner, traceOf(winner.payload.n)),
    view(
      { id: turn.id, shard: turn.shard, payload: { n: 3000 }, due_at: dueAt, idempotency_key: 'turn' },
      undefined,
    ),
  ];
  // Each event twice: from the outbox relay and from Debezium, alike but for the relay's mark.
  await eventually(
    'every created job to reach kairos.job-events by both paths',
    () => jobs.every((j) => (published.get(j.id)?.length ?? 0) >= 2),
    90_000,
  );
  for (const j of jobs) {
    const events = published.get(j.id)!;
    expect(
      events.map((e) => e.relayed),
      j.id,
    ).toEqual(expect.arrayContaining([true, false]));
    expect(events, j.id).toHaveLength(2);
    expect({ ...events[0], relayed: true }).toEqual({ ...events[1], relayed: true });
    const [e] = events;
    expect({ ...e, relayed: false, event: { ...e!.event, event_id: 'x', occurred_at: 0 } }).toEqual({
      relayed: false,
      partition: j.shard,
      key: j.id,
      traceparent: j.trace ?? expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      jobIdHeader: j.id,
      event: {
        event_id: 'x',
        event_type: 'SCHEDULED',
        job_id: j.id,
        tenant_id: 'acme',
        job_type: 'report.build',
        resource_class: 'default',
        payload: JSON.stringify(j.payload),
        due_at: Date.parse(j.due_at),
        deadline_at: null,
        version: 1,
        fence: 1,
        attempt: 1,
        max_attempts: 3,
        routing_key: j.id,
        shard: j.shard,
        occurred_at: 0,
      },
    });
  }
  const total = (await p.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
  expect(total).toBe(jobs.length);
  expect([...published.values()].flat()).toHaveLength(2 * jobs.length);
  // A create is one statement; its outbox rows are deleted soon after it, not in it.
  await eventually(
    'the outbox rows to be swept',
    async () =>
      (
        await p.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM outbox WHERE aggregatetype <> 'heartbeat'",
        )
      ).rows[0]!.n === 0,
  );
});

test('a lost connection fails every member of a group with its own copy of the error, and nothing is retried', async () => {
  const ns = await useNamespace('create-group-down');
  // Nothing listens on port 1: every connection attempt is refused, as when PostgreSQL is down.
  const pool = createPool({
    connectionString: 'postgres://kairos@127.0.0.1:1/kairos',
    connectionTimeoutMs: 2000,
  });
  ns.defer(() => pool.end());
  const commands = new JobCommands({
    pool,
    codec: new AvroCodec(createRegistryClient({ url: ns.services.registryUrl })),
    jobEventsTopic: `${ns.prefix}kairos.job-events`,
    jobEventPartitions: ns.services.jobEventPartitions,
    limits: compileJobLimits({ resourceClasses: ['default'] }),
  });
  const outcomes = await Promise.all(
    Array.from({ length: 5 }, (_, n) =>
      commands.createJob(body(n)).then(
        () => 'created',
        (err: unknown) => err,
      ),
    ),
  );
  for (const o of outcomes) expect((o as { code?: string }).code).toBe('ECONNREFUSED');
  expect(commands.createGroupStats).toEqual({ writes: 1, members: 5, retriedAlone: 0 });
});
