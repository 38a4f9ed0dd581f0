/**
 * No consumer of an internal topic is stopped by one record (issue 31). A stock Kafka client
 * writes what a broken or hostile writer could onto kairos.task-results and kairos.job-events,
 * on every partition: values that do not decode, a schema id the registry does not know, a record
 * of another topic's schema, and records with each field out of range (the result whose
 * started_at of 9e15 ms put the tracker in a crash loop among them); and tasks a worker can never
 * run onto kairos.tasks.default. The apps run as their own processes. Every such result and event
 * is set aside on kairos.dead-records with its reason and fields, the worker skips the tasks, and
 * jobs created afterwards all finish: no partition of any of these topics is stuck.
 */
import { randomUUID } from 'node:crypto';
import { AvroCodec, createRegistryClient, topicNames, type TopicNames } from '@kairos/kafka';
import {
  SCHEMAS,
  type DeadRecordRecord,
  type JobEventRecord,
  type TaskDispatchRecord,
  type TaskResultRecord,
} from '@kairos/schemas';
import { expect, test } from 'vitest';
import { createJobsOverHttp, startDeployment, waitAllSucceeded } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';
import { readAllDecoded } from '../support/topics.js';

const NOW = Date.now();

const RESULT: TaskResultRecord = {
  job_id: randomUUID(),
  tenant_id: 'acme',
  attempt: 1,
  fence: 1,
  epoch: 1,
  shard: 0,
  outcome: 'SUCCEEDED',
  error: null,
  worker_id: 'forger',
  due_at: NOW,
  started_at: NOW,
  finished_at: NOW,
  resource_class: 'default',
  dispatched_at: NOW,
};

/** Results with one field out of range each, by that field's name. */
const BAD_RESULTS: Record<string, Partial<TaskResultRecord>> = {
  started_at: { started_at: 9e15 },
  finished_at: { finished_at: -1 },
  due_at: { due_at: 8.7e15 },
  job_id: { job_id: 'not-a-uuid' },
  attempt: { attempt: 0 },
  fence: { fence: 0 },
  worker_id: { worker_id: 'w\u0000' },
  resource_class: { resource_class: 'NOT A CLASS' },
  'error.retry_after_ms': {
    outcome: 'FAILED',
    error: { error_class: 'E', message: 'm', failure_class: 'throttled', retry_after_ms: -5 },
  },
};

const EVENT: JobEventRecord = {
  event_id: randomUUID(),
  event_type: 'SCHEDULED',
  job_id: randomUUID(),
  tenant_id: 'acme',
  job_type: 'demo.hello',
  resource_class: 'default',
  payload: '{}',
  due_at: NOW,
  deadline_at: null,
  version: 1,
  fence: 0,
  attempt: 1,
  max_attempts: 3,
  routing_key: 'r',
  shard: 0,
  occurred_at: NOW,
};

/** Job events with one field out of range each. */
const BAD_EVENTS: Record<string, Partial<JobEventRecord>> = {
  due_at: { due_at: 9e15 },
  version: { version: 0 },
  job_id: { job_id: 'x' },
  resource_class: { resource_class: '' },
  deadline_at: { deadline_at: -3 },
};

/** The poison of one topic: [expected reason, expected field or null, value]. */
type Poison = [reason: string, field: string | null, value: Buffer];

async function poisonOf(codec: AvroCodec, topics: TopicNames): Promise<Map<string, Poison[]>> {
  const unknownId = Buffer.concat([Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0]), Buffer.from('body')]);
  const results: Poison[] = [
    ['UNDECODABLE', null, Buffer.from('not avro at all')],
    ['UNKNOWN_SCHEMA', null, unknownId],
    // A job event's bytes (its schema registered under kairos.job-events) on the results topic.
    ['WRONG_SCHEMA', null, await codec.encode(topics.jobEvents, SCHEMAS.jobEvent, EVENT)],
  ];
  for (const [field, patch] of Object.entries(BAD_RESULTS))
    results.push([
      'INVALID_FIELD',
      field,
      await codec.encode(topics.taskResults, SCHEMAS.taskResult, { ...RESULT, ...patch }),
    ]);
  const events: Poison[] = [
    ['UNDECODABLE', null, Buffer.from([0, 1])],
    ['UNKNOWN_SCHEMA', null, unknownId],
    ['WRONG_SCHEMA', null, await codec.encode(topics.taskResults, SCHEMAS.taskResult, RESULT)],
  ];
  for (const [field, patch] of Object.entries(BAD_EVENTS))
    events.push([
      'INVALID_FIELD',
      field,
      await codec.encode(topics.jobEvents, SCHEMAS.jobEvent, { ...EVENT, ...patch }),
    ]);
  const task: TaskDispatchRecord = {
    job_id: randomUUID(),
    tenant_id: 'acme',
    job_type: 'demo.hello',
    resource_class: 'default',
    payload: '{}',
    due_at: 9e15,
    deadline_at: null,
    attempt: 1,
    max_attempts: 1,
    fence: 0,
    epoch: 1,
    shard: 0,
    version: 1,
    idempotency_key: 'k',
    dispatched_at: NOW,
  };
  // Workers skip these (logged: they may write only results and leases, not dead records).
  const tasks: Poison[] = [
    ['UNDECODABLE', null, Buffer.from('garbage')],
    ['WRONG_SCHEMA', null, await codec.encode(topics.jobEvents, SCHEMAS.jobEvent, EVENT)],
    ['INVALID_FIELD', 'due_at', await codec.encode(topics.tasks('default'), SCHEMAS.taskDispatch, task)],
  ];
  return new Map([
    [topics.taskResults, results],
    [topics.jobEvents, events],
    [topics.tasks('default'), tasks],
  ]);
}

test('poison on kairos.task-results and kairos.job-events is set aside with its reason, and every later job finishes', async () => {
  const ns = await useNamespace('poison-records');
  const d = await startDeployment(ns, { apps: ['api', 'tracker', 'delay-tier', 'worker-example'] });
  const topics = topicNames(ns.prefix);
  const codec = new AvroCodec(createRegistryClient({ url: ns.services.registryUrl }));
  const warm = await createJobsOverHttp(d, [
    { tenant: 'acme', type: 'demo.hello', resource_class: 'default', payload: { name: 'warm' } },
  ]);
  await waitAllSucceeded(
    d,
    warm.map((j) => j.id),
    90_000,
  );

  // Every poison record on every partition of its topic: each partition's consumer meets all.
  const poison = await poisonOf(codec, topics);
  const admin = ns.admin();
  await admin.connect();
  const producer = ns.producer();
  await producer.connect();
  let sent = 0;
  for (const [topic, records] of poison) {
    const partitions = (await admin.fetchTopicOffsets(topic)).map((o) => o.partition);
    for (const partition of partitions) {
      await producer.send({
        topic,
        messages: records.map(([, , value]) => ({ key: randomUUID(), value, partition })),
      });
      if (topic !== topics.tasks('default')) sent += records.length;
    }
  }
  await producer.disconnect();
  await admin.disconnect();

  // The pipeline keeps going: jobs created after the poison, over every partition, all finish.
  const jobs = await createJobsOverHttp(
    d,
    Array.from({ length: 24 }, (_, i) => ({
      tenant: 'acme',
      type: 'demo.hello',
      resource_class: 'default',
      payload: { name: `after-${i}` },
    })),
  );
  await waitAllSucceeded(
    d,
    jobs.map((j) => j.id),
    90_000,
  );

  // Each poison record is on kairos.dead-records once, with its reason, field and source.
  let dead: DeadRecordRecord[] = [];
  await eventually(`${sent} dead records`, async () => {
    dead = (await readAllDecoded(ns, topics.deadRecords)).map((m) => m.value as DeadRecordRecord);
    return dead.length >= sent;
  });
  expect(dead.length).toBe(sent);
  expect(new Set(dead.map((r) => r.dead_record_id)).size).toBe(sent);
  for (const topic of [topics.taskResults, topics.jobEvents]) {
    const records = poison.get(topic) ?? [];
    const mine = dead.filter((r) => r.source_topic === topic);
    const partitions = new Set(mine.map((r) => r.source_partition)).size;
    const expected = records.flatMap(([reason, field]) =>
      Array.from({ length: partitions }, () => `${reason} ${field}`),
    );
    expect(mine.map((r) => `${r.reason} ${r.fields[0]?.field ?? null}`).sort()).toEqual(expected.sort());
    for (const r of mine) {
      expect(r.consumer).toBe(
        topic === topics.taskResults ? `${ns.prefix}kairos-tracker` : `${ns.prefix}kairos-delay-tier`,
      );
      expect(r.original_value).not.toBeNull();
      expect(r.message.length).toBeGreaterThan(0);
    }
  }
  // What was refused changed nothing: no job or attempt of the forged ids exists.
  const { rows } = await d.pool.query<{ n: string }>(
    'SELECT (SELECT count(*) FROM attempts WHERE job_id = $1) + (SELECT count(*) FROM jobs WHERE id = $2) AS n',
    [RESULT.job_id, EVENT.job_id],
  );
  expect(Number(rows[0]?.n)).toBe(0);
}, 240_000);
