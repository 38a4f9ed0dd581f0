import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { AvroCodec, topicNames } from '@kairos/kafka';
import {
  SCHEMAS,
  type CreateJobRecord,
  type JobEventRecord,
  type RejectionReason,
  type ScheduleRequestRecord,
} from '@kairos/schemas';
import avro from 'avsc';
import type { Message } from 'kafkajs';
import { seededRandom } from '@kairos/ops';
import { useNamespace } from '../support/namespace.js';
import { collectAnswers, startIngest } from '../support/ingest.js';
import { eventually } from '../support/pipeline.js';

const MALFORMED = 7500;
const VALID = 2500;
const HOUR = 3600_000;
const DAY = 24 * HOUR;

type Expected =
  | { readonly kind: 'rejected'; readonly reason: RejectionReason; readonly what: string }
  | {
      readonly kind: 'accepted';
      readonly requestId: string;
      readonly jobKey: string;
      readonly duplicate: boolean;
    };

interface Case {
  readonly message: Message;
  readonly expected: Expected;
}

test(`fuzz: ${MALFORMED} malformed or invalid requests among ${VALID} valid ones, each answered once and rightly`, async () => {
  const seed = Number(process.env.KAIROS_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`[fuzz] seed ${seed} (replay with KAIROS_FUZZ_SEED=${seed})`);
  const random = seededRandom(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

  const ns = await useNamespace('schedule-requests-fuzz');
  const { ingest, registry, pool, fatal } = await startIngest(ns, {
    ingest: { tenants: ['acme', 'globex'] },
  });
  const answers = await collectAnswers(ns, registry);
  const topics = topicNames(ns.prefix);
  const codec = new AvroCodec(registry);
  const requestSchemaId = await codec.schemaId(topics.scheduleRequests, SCHEMAS.scheduleRequest);
  const reader = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
  const decodesLocally = (bytes: Buffer) => {
    try {
      reader.fromBuffer(bytes.subarray(5));
      return true;
    } catch {
      return false;
    }
  };

  const now = Date.now();
  const createJob = (extra: Partial<CreateJobRecord> = {}): CreateJobRecord => ({
    type: 'fuzz.job',
    resource_class: pick(['critical', 'default', 'io']),
    payload: JSON.stringify({ n: int(0, 1e6) }),
    due_at: null,
    delay_ms: HOUR,
    deadline_at: null,
    max_attempts: null,
    retry: null,
    ...extra,
  });
  const request = (
    command: ScheduleRequestRecord['command'],
    extra: Partial<ScheduleRequestRecord> = {},
  ) => ({
    request_id: randomUUID(),
    tenant: pick(['acme', 'globex']),
    idempotency_key: randomUUID(),
    command,
    ...extra,
  });
  const create = (extra: Partial<CreateJobRecord> = {}, envelope: Partial<ScheduleRequestRecord> = {}) =>
    request({ 'io.kairos.requests.CreateJob': createJob(extra) }, envelope);
  const encode = (r: ScheduleRequestRecord) =>
    codec.encode(topics.scheduleRequests, SCHEMAS.scheduleRequest, r);

  // Requests valid as Avro whose fields break a rule: [what, reason, request].
  const invalid: (() => [string, RejectionReason, ScheduleRequestRecord])[] = [
    () => ['max_attempts 0', 'INVALID_FIELD', create({ max_attempts: 0 })],
    () => ['max_attempts over 100', 'INVALID_FIELD', create({ max_attempts: int(101, 100_000) })],
    () => ['negative delay', 'INVALID_FIELD', create({ delay_ms: -int(1, 1e9) })],
    () => [
      'cap below base',
      'INVALID_FIELD',
      create({ retry: { base_ms: 5000, cap_ms: int(0, 4999), jitter_ms: null } }),
    ],
    () => [
      'base over 24 h',
      'INVALID_FIELD',
      create({ retry: { base_ms: DAY + int(1, 1e9), cap_ms: null, jitter_ms: null } }),
    ],
    () => ['unknown resource class', 'INVALID_FIELD', create({ resource_class: pick(['gpu', '', 'IO']) })],
    () => ['bad type', 'INVALID_FIELD', create({ type: pick(['has space', '', 'é']) })],
    () => ['payload not JSON', 'INVALID_FIELD', create({ payload: pick(['{nope', '', 'undefined', '[1,']) })],
    () => [
      'due over 24 h ago',
      'DUE_TOO_FAR_IN_PAST',
      create({ delay_ms: null, due_at: now - DAY - int(HOUR, 300 * DAY) }),
    ],
    () => [
      'due over 5 years ahead',
      'INVALID_FIELD',
      create({ delay_ms: null, due_at: now + 6 * 365 * DAY + int(0, 1e11) }),
    ],
    () => ['due_at and delay_ms', 'INVALID_FIELD', create({ due_at: now + HOUR })],
    () => ['deadline before due', 'INVALID_FIELD', create({ deadline_at: now + int(0, HOUR / 2) })],
    () => ['unrepresentable time', 'INVALID_FIELD', create({ delay_ms: null, due_at: pick([9e15, -9e15]) })],
    () => [
      'payload over 64 KiB',
      'PAYLOAD_TOO_LARGE',
      create({ payload: JSON.stringify({ b: 'x'.repeat(65_536 + int(0, 20_000)) }) }),
    ],
    () => [
      // Too large to be copied into its rejection: the rejection says so instead.
      'payload of 600 KB',
      'PAYLOAD_TOO_LARGE',
      create({ payload: JSON.stringify({ b: 'x'.repeat(600_000) }) }),
    ],
    // What PostgreSQL cannot store is refused before it is asked (it once ended as INTERNAL_ERROR).
    () => [
      'payload with NUL',
      'INVALID_FIELD',
      create({ payload: JSON.stringify({ note: `a${'\u0000'}b`, n: int(0, 9) }) }),
    ],
    () => [
      'payload with a lone surrogate',
      'INVALID_FIELD',
      create({ payload: pick(['"\\ud800"', '{"k":"x\\udfff"}']) }),
    ],
    () => [
      'payload nested too deep',
      'INVALID_FIELD',
      create({ payload: ((n) => `${'['.repeat(n)}1${']'.repeat(n)}`)(int(65, 3000)) }),
    ],
    () => [
      'idempotency key with NUL',
      'INVALID_FIELD',
      create({}, { idempotency_key: `k${'\u0000'}${int(0, 1e9)}` }),
    ],
    () => ['unknown tenant', 'UNKNOWN_TENANT', create({}, { tenant: pick(['initech', 'ACME', '']) })],
    () => ['request id over 128', 'INVALID_FIELD', create({}, { request_id: 'r'.repeat(int(129, 10_000)) })],
    () => [
      'cancel: empty idempotency key',
      'INVALID_FIELD',
      request({ 'io.kairos.requests.CancelJob': { job_id: randomUUID() } }, { idempotency_key: '' }),
    ],
    () => ['empty idempotency key', 'INVALID_FIELD', create({}, { idempotency_key: '' })],
    () => [
      'idempotency key over 256',
      'INVALID_FIELD',
      create({}, { idempotency_key: 'k'.repeat(int(257, 600)) }),
    ],
    () => [
      'cancel: job id not a UUID',
      'INVALID_FIELD',
      request({ 'io.kairos.requests.CancelJob': { job_id: 'nope' } }),
    ],
    () => [
      'cancel: no such job',
      'JOB_NOT_FOUND',
      request({ 'io.kairos.requests.CancelJob': { job_id: randomUUID() } }),
    ],
    () => [
      'reschedule: no such job',
      'JOB_NOT_FOUND',
      request({
        'io.kairos.requests.RescheduleJob': {
          job_id: randomUUID(),
          due_at: null,
          delay_ms: 1000,
          deadline_at: null,
          clear_deadline: false,
        },
      }),
    ],
  ];

  const jobEvent: JobEventRecord = {
    event_id: randomUUID(),
    event_type: 'SCHEDULED',
    job_id: randomUUID(),
    tenant_id: 'acme',
    job_type: 't',
    resource_class: 'io',
    payload: '{}',
    due_at: now,
    deadline_at: null,
    version: 1,
    fence: 1,
    attempt: 1,
    max_attempts: 3,
    routing_key: 'r',
    shard: 0,
    occurred_at: now,
  };

  // Malformed bytes: [what, reason, value].
  type Drawn = [string, RejectionReason, Buffer | null] | undefined;
  const malformed: (() => Drawn | Promise<Drawn>)[] = [
    () => {
      const bytes = Buffer.from(Array.from({ length: int(0, 300) }, () => int(0, 255)));
      if (bytes.length >= 5) bytes[0] = int(1, 255); // no magic byte
      return ['random bytes', 'UNDECODABLE', bytes];
    },
    async () => {
      const full = await encode(create());
      return ['truncated Avro', 'UNDECODABLE', full.subarray(0, int(5, full.length - 1))];
    },
    async () => {
      const full = await encode(create());
      const tail = Buffer.from(Array.from({ length: int(1, 8) }, () => int(0, 255)));
      return ['trailing bytes', 'UNDECODABLE', Buffer.concat([full, tail])];
    },
    () => {
      const bytes = Buffer.concat([
        Buffer.from([0, 0, 0, 0, 0]),
        Buffer.from(Array.from({ length: int(0, 200) }, () => int(0, 255))),
      ]);
      bytes.writeInt32BE(requestSchemaId, 1);
      // Random bodies almost never decode; one that does is not malformed, so it is drawn again.
      return decodesLocally(bytes) ? undefined : ['garbage Avro body', 'UNDECODABLE', bytes];
    },
    async () => {
      const bytes = Buffer.from(await encode(create()));
      bytes.writeInt32BE(int(100_000_000, 2 ** 31 - 1), 1);
      return ['unknown schema id', 'UNKNOWN_SCHEMA', bytes];
    },
    async () => [
      'a record of another subject',
      'WRONG_SCHEMA',
      await codec.encode(topics.jobEvents, SCHEMAS.jobEvent, { ...jobEvent, event_id: randomUUID() }),
    ],
    () => ['no value', 'UNDECODABLE', null],
  ];

  const cases: Case[] = [];
  for (let i = 0; cases.length < MALFORMED; i++) {
    const key = `bad-${i}`;
    if (random() < 0.5) {
      const [what, reason, r] = pick(invalid)();
      cases.push({ message: { key, value: await encode(r) }, expected: { kind: 'rejected', reason, what } });
    } else {
      const drawn = await pick(malformed)();
      if (!drawn) continue;
      const [what, reason, value] = drawn;
      cases.push({ message: { key, value }, expected: { kind: 'rejected', reason, what } });
    }
  }
  const validKeys: string[] = [];
  for (let i = 0; i < VALID; i++) {
    // One in ten repeats an earlier key: answered with the first job, creating none.
    const repeat = validKeys.length > 0 && random() < 0.1;
    const jobKey = repeat ? pick(validKeys) : `job-${i}`;
    if (!repeat) validKeys.push(jobKey);
    const r = create({}, { tenant: 'acme', idempotency_key: jobKey });
    cases.push({
      message: { key: jobKey, value: await encode(r) },
      expected: { kind: 'accepted', requestId: r.request_id, jobKey, duplicate: repeat },
    });
  }
  // Interleave (Fisher-Yates), then fix each key's duplicate flag to its first occurrence in order.
  for (let i = cases.length - 1; i > 0; i--) {
    const j = int(0, i);
    [cases[i], cases[j]] = [cases[j]!, cases[i]!];
  }
  const seen = new Set<string>();
  const ordered = cases.map((c) => {
    if (c.expected.kind !== 'accepted') return c;
    const duplicate = seen.has(c.expected.jobKey);
    seen.add(c.expected.jobKey);
    return { ...c, expected: { ...c.expected, duplicate } };
  });

  const producer = ns.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const t0 = Date.now();
  // In sends of at most ~400 KB: one partition's share of a send is one record batch, which the
  // broker limits like a message (1 MiB).
  let chunk: Message[] = [];
  let bytes = 0;
  const flush = async () => {
    if (chunk.length > 0) await producer.send({ topic: topics.scheduleRequests, acks: -1, messages: chunk });
    chunk = [];
    bytes = 0;
  };
  for (const c of ordered) {
    const size = (c.message.value as Buffer | null)?.length ?? 0;
    if (bytes + size > 400_000) await flush();
    chunk.push(c.message);
    bytes += size;
  }
  await flush();
  await producer.disconnect();

  const total = ordered.length;
  await eventually(
    `${total} answers (seed ${seed})`,
    () => answers.outcomes.length + answers.rejections.length >= total,
    180_000,
  );
  const answeredS = ((Date.now() - t0) / 1000).toFixed(1);
  // Nothing more comes: every request was answered exactly once.
  await new Promise((r) => setTimeout(r, 3000));
  expect(answers.outcomes.length + answers.rejections.length, `seed ${seed}`).toBe(total);

  const rejectionsByKey = new Map<string, RejectionReason[]>();
  for (const { key, record } of answers.rejections) {
    rejectionsByKey.set(key ?? '', [...(rejectionsByKey.get(key ?? '') ?? []), record.reason]);
  }
  const wrong: string[] = [];
  for (const c of ordered) {
    const key = String(c.message.key);
    if (c.expected.kind !== 'rejected') continue;
    const got = rejectionsByKey.get(key) ?? [];
    if (got.length !== 1 || got[0] !== c.expected.reason) {
      wrong.push(`${key} (${c.expected.what}): expected ${c.expected.reason}, got ${JSON.stringify(got)}`);
    }
  }
  expect(wrong.slice(0, 20), `seed ${seed}: ${wrong.length} malformed request(s) answered wrongly`).toEqual(
    [],
  );
  // The rejection carries the request exactly as it arrived.
  const sentByKey = new Map(ordered.map((c) => [String(c.message.key), c.message]));
  for (const { key, record } of answers.rejections) {
    const sent = sentByKey.get(key ?? '')!;
    expect(record.original_key?.toString(), `seed ${seed}`).toBe(key);
    const bytes = sent.value === null ? null : Buffer.from(sent.value as Buffer);
    if (bytes && bytes.length > 512 * 1024) {
      expect(record.original_value, `seed ${seed}`).toBeNull();
      expect(record.message).toMatch(/too large to include/);
    } else {
      const got = record.original_value === null ? null : Buffer.from(record.original_value);
      expect(got, `seed ${seed}`).toEqual(bytes);
    }
  }

  const outcomes = new Map<string, typeof answers.outcomes>();
  for (const o of answers.outcomes) outcomes.set(o.request_id, [...(outcomes.get(o.request_id) ?? []), o]);
  const jobOfKey = new Map<string, string>();
  for (const c of ordered) {
    if (c.expected.kind !== 'accepted') continue;
    const got = outcomes.get(c.expected.requestId) ?? [];
    expect(got.length, `seed ${seed}: outcomes of ${c.expected.jobKey}`).toBe(1);
    expect(got[0]!.duplicate, `seed ${seed}: ${c.expected.jobKey}`).toBe(c.expected.duplicate);
    const job = jobOfKey.get(c.expected.jobKey) ?? got[0]!.job_id;
    jobOfKey.set(c.expected.jobKey, job);
    expect(got[0]!.job_id, `seed ${seed}: every request with a key answers with one job`).toBe(job);
    expect(rejectionsByKey.has(c.expected.jobKey), `seed ${seed}`).toBe(false);
  }
  const rows = await pool.query<{ key: string; id: string }>(
    `SELECT idempotency_key AS key, id FROM jobs ORDER BY idempotency_key`,
  );
  expect(rows.rows.length, `seed ${seed}: one job per valid key, no job for anything else`).toBe(
    validKeys.length,
  );
  expect(new Map(rows.rows.map((r) => [r.key, r.id]))).toEqual(jobOfKey);
  expect(fatal).toEqual([]);
  const stats = ingest.stats();
  // The Prometheus counters tell the same story as the answers.
  const metrics = await ingest.metrics.registry.getMetricsAsJSON();
  const series = (name: string) => metrics.find((m) => m.name === name)?.values ?? [];
  const byReason = Object.fromEntries(
    series('kairos_ingest_rejections_total').map((v) => [String(v.labels.reason), v.value]),
  );
  expect(byReason).toEqual(stats.rejected);
  const results = (result: string) =>
    series('kairos_ingest_requests_total')
      .filter((v) => v.labels.result === result)
      .reduce((n, v) => n + v.value, 0);
  expect([results('accepted'), results('duplicate')]).toEqual([stats.accepted, stats.duplicates]);
  console.log(
    `[fuzz] ${total} requests answered in ${answeredS} s: ${stats.accepted} created, ${stats.duplicates} duplicates, ` +
      `rejected ${JSON.stringify(stats.rejected)}`,
  );
}, 300_000);
