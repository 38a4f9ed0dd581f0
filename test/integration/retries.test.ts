import { expect, test } from 'vitest';
import { Tracker } from '@kairos/tracker';
import { PermanentError, ThrottledError, TransientError, type TaskContext } from '@kairos/worker-sdk';
import { SCHEMAS, type DlqEntryRecord, type TaskResultRecord } from '@kairos/schemas';
import { useNamespace } from '../support/namespace.js';
import { eventually, RESOURCE_CLASSES, startPipeline, type Pipeline } from '../support/pipeline.js';
import { readAllDecoded } from '../support/topics.js';

interface Run {
  readonly attempt: number;
  readonly fence: number;
  readonly dueAt: number;
  readonly dispatchedAt: number;
  readonly startedAt: number;
}

/** Every handler run, per job, in order. */
class Runs {
  readonly #runs = new Map<string, Run[]>();

  record(ctx: TaskContext): Run[] {
    const list = this.#runs.get(ctx.jobId) ?? [];
    list.push({
      attempt: ctx.attempt,
      fence: ctx.fence,
      dueAt: ctx.dueAt.getTime(),
      dispatchedAt: ctx.dispatchedAt.getTime(),
      startedAt: Date.now(),
    });
    this.#runs.set(ctx.jobId, list);
    return list;
  }

  of(jobId: string): Run[] {
    return this.#runs.get(jobId) ?? [];
  }
}

interface JobView {
  id: string;
  state: string;
  attempt: number;
  fence: number;
  max_attempts: number;
  retry: { base_ms: number; cap_ms: number; jitter_ms: number };
  last_error: string | null;
}

async function createJob(p: Pipeline, body: Record<string, unknown>): Promise<JobView> {
  const res = await fetch(`${p.apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
    body: JSON.stringify({ tenant: 'acme', payload: {}, ...body }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as JobView;
}

async function getJob(p: Pipeline, id: string): Promise<JobView> {
  const res = await fetch(`${p.apiUrl}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${p.apiKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as JobView;
}

/** The namespace's dead letters of one class, decoded through the registry like any client would. */
async function deadLetters(
  p: Pipeline,
  resourceClass: string,
): Promise<{ key: string; entry: DlqEntryRecord }[]> {
  const messages = await readAllDecoded(p.ns, p.topics.dlq(resourceClass));
  return messages.map((m) => ({ key: m.key ?? '', entry: m.value as DlqEntryRecord }));
}

/** Gaps between consecutive dispatches of a job (Redis time of each due-pop). */
function gaps(runs: readonly Run[]): number[] {
  return runs.slice(1).map((r, i) => r.dispatchedAt - runs[i]!.dispatchedAt);
}

// Generous on a loaded two-core machine: the upper bound only shows no retry waits for something else.
const SLACK_MS = 10_000;

test('failure classes: transient retries with backoff, throttled honours Retry-After, permanent and exhausted jobs are dead-lettered once with their history', async () => {
  const ns = await useNamespace('retries');
  const p = await startPipeline(ns);
  const runs = new Runs();
  const worker = p.worker();
  worker.handle('retry.flaky', (_payload, ctx) => {
    // Fails twice, then succeeds on its third (last) attempt.
    if (runs.record(ctx).length < 3) throw new TransientError(`gateway timeout on attempt ${ctx.attempt}`);
  });
  worker.handle('retry.throttled', (_payload, ctx) => {
    if (runs.record(ctx).length === 1) throw new ThrottledError('429 slow down', { retryAfterMs: 1500 });
  });
  worker.handle('retry.permanent', (_payload, ctx) => {
    runs.record(ctx);
    throw new PermanentError('no such recipient');
  });
  worker.handle('retry.exhausted', (_payload, ctx) => {
    const n = runs.record(ctx).length;
    // A plain error is ambiguous (the effect may have happened): retried like a transient one.
    if (n === 2) throw new Error('socket closed after the request was sent');
    throw new TransientError(`503 on attempt ${n}`);
  });
  await worker.start();

  const flaky = await createJob(p, {
    type: 'retry.flaky',
    resource_class: 'default',
    retry: { base_ms: 200, cap_ms: 2000, jitter_ms: 100 },
  });
  expect(flaky.retry).toEqual({ base_ms: 200, cap_ms: 2000, jitter_ms: 100 });
  expect(flaky.max_attempts).toBe(3);
  const throttled = await createJob(p, {
    type: 'retry.throttled',
    resource_class: 'default',
    retry: { base_ms: 100, cap_ms: 1000, jitter_ms: 0 },
  });
  const permanent = await createJob(p, {
    type: 'retry.permanent',
    resource_class: 'critical',
    max_attempts: 5,
    retry: { base_ms: 100, cap_ms: 1000, jitter_ms: 0 },
  });
  // No worker handles this type: a missing handler is permanent.
  const unhandled = await createJob(p, { type: 'retry.nobody', resource_class: 'critical', max_attempts: 5 });
  const exhausted = await createJob(p, {
    type: 'retry.exhausted',
    resource_class: 'io',
    payload: { to: 'a@example.com' },
    retry: { base_ms: 100, cap_ms: 150, jitter_ms: 0 },
  });
  // Defaults when a request gives no policy.
  expect(unhandled.retry).toEqual({ base_ms: 1000, cap_ms: 300_000, jitter_ms: 1000 });

  const done = new Set(['SUCCEEDED', 'FAILED']);
  await eventually(
    'every job to finish',
    async () => {
      for (const j of [flaky, throttled, permanent, exhausted]) {
        if (!done.has((await getJob(p, j.id)).state)) return false;
      }
      return true;
    },
    90_000,
  );

  // Transient twice, then success: three attempts, each a new fence, each after its backoff.
  const f = await getJob(p, flaky.id);
  expect(f).toMatchObject({
    state: 'SUCCEEDED',
    attempt: 3,
    fence: 3,
    last_error: 'gateway timeout on attempt 2',
  });
  const fr = runs.of(flaky.id);
  expect(fr.map((r) => [r.attempt, r.fence])).toEqual([
    [1, 1],
    [2, 2],
    [3, 3],
  ]);
  const [g1, g2] = gaps(fr);
  expect(g1).toBeGreaterThanOrEqual(200); // base · 2^0 (+ up to 100 jitter)
  expect(g1).toBeLessThan(200 + 100 + SLACK_MS);
  expect(g2).toBeGreaterThanOrEqual(400); // base · 2^1 (+ up to 100 jitter)
  expect(g2).toBeLessThan(400 + 100 + SLACK_MS);
  for (const r of fr) expect(r.startedAt, 'never early').toBeGreaterThanOrEqual(r.dueAt);
  // The retry's due time carries the backoff, measured from the failure.
  expect(fr[1]!.dueAt - fr[0]!.dispatchedAt).toBeGreaterThanOrEqual(200);

  // Throttled with Retry-After 1.5 s: the retry waits for it, not for the 100 ms backoff.
  expect(await getJob(p, throttled.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 2 });
  const [tg] = gaps(runs.of(throttled.id));
  expect(tg).toBeGreaterThanOrEqual(1500);
  expect(tg).toBeLessThan(1500 + SLACK_MS);

  // Permanent: one attempt, FAILED, no retry.
  expect(await getJob(p, permanent.id)).toMatchObject({
    state: 'FAILED',
    attempt: 1,
    last_error: 'no such recipient',
  });
  expect(runs.of(permanent.id)).toHaveLength(1);
  // No worker handles retry.nobody: it waits (QUEUED, given back to the waiting room), never FAILED.
  expect(await getJob(p, unhandled.id)).toMatchObject({ state: 'QUEUED', attempt: 1 });

  // Exhausted: three attempts (transient, ambiguous, transient), then FAILED.
  expect(await getJob(p, exhausted.id)).toMatchObject({ state: 'FAILED', attempt: 3, fence: 3 });
  expect(runs.of(exhausted.id)).toHaveLength(3);

  // The attempts table holds every attempt with its failure class.
  const attempts = await p.pool.query<{ fence: number; outcome: string; failure_class: string | null }>(
    'SELECT fence, outcome, failure_class FROM attempts WHERE job_id = $1 ORDER BY fence',
    [flaky.id],
  );
  expect(attempts.rows).toEqual([
    { fence: 1, outcome: 'FAILED', failure_class: 'transient' },
    { fence: 2, outcome: 'FAILED', failure_class: 'transient' },
    { fence: 3, outcome: 'SUCCEEDED', failure_class: null },
  ]);
  // The same over HTTP: every attempt with its fence, worker, times and error.
  const auth = { headers: { authorization: `Bearer ${p.apiKey}` } };
  const overHttp = (await (await fetch(`${p.apiUrl}/v1/jobs/${exhausted.id}/attempts`, auth)).json()) as {
    attempts: {
      fence: number;
      outcome: string;
      failure_class: string;
      error_message: string;
      worker_id: string;
    }[];
  };
  expect(overHttp.attempts.map((a) => [a.fence, a.outcome, a.failure_class, a.error_message])).toEqual([
    [1, 'FAILED', 'transient', '503 on attempt 1'],
    [2, 'FAILED', 'ambiguous', 'socket closed after the request was sent'],
    [3, 'FAILED', 'transient', '503 on attempt 3'],
  ]);
  expect(overHttp.attempts.every((a) => typeof a.worker_id === 'string')).toBe(true);
  // Failed jobs are found by their latest failure class.
  const search = (await (
    await fetch(`${p.apiUrl}/v1/jobs?tenant=acme&state=FAILED&failure_class=permanent`, auth)
  ).json()) as { jobs: { id: string; last_failure_class: string }[] };
  expect(search.jobs.map((j) => j.id)).toEqual([permanent.id]);
  expect(search.jobs.every((j) => j.last_failure_class === 'permanent')).toBe(true);
  const dead = (await (await fetch(`${p.apiUrl}/v1/dead-letters?tenant=acme`, auth)).json()) as {
    dead_letters: { id: string }[];
  };
  expect(new Set(dead.dead_letters.map((j) => j.id))).toEqual(new Set([permanent.id, exhausted.id]));

  // Results of superseded attempts (a zombie's, a redelivery's) change no job: fenced by id + fence.
  const producer = ns.producer();
  await producer.connect();
  const stale = (jobId: string, fence: number): TaskResultRecord => ({
    job_id: jobId,
    tenant_id: 'acme',
    attempt: fence,
    fence,
    epoch: 1,
    shard: 0,
    outcome: 'FAILED',
    error: {
      error_class: 'PermanentError',
      message: 'late result of a superseded attempt',
      failure_class: 'permanent',
      retry_after_ms: null,
    },
    worker_id: 'zombie',
    due_at: Date.now(),
    started_at: Date.now(),
    finished_at: Date.now(),
  });
  await producer.send({
    topic: p.topics.taskResults,
    messages: await Promise.all(
      [stale(flaky.id, 1), stale(exhausted.id, 3), stale(permanent.id, 1)].map(async (r) => ({
        key: r.job_id,
        value: await p.codec.encode(p.topics.taskResults, SCHEMAS.taskResult, r),
      })),
    ),
  });
  await producer.disconnect();
  // Wait until the tracker has committed past them (it commits only after its transaction).
  const admin = ns.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(p.topics.taskResults);
  await eventually('the tracker to apply the late results', async () => {
    const [committed] = await admin.fetchOffsets({
      groupId: `${ns.prefix}tracker`,
      topics: [p.topics.taskResults],
    });
    const at = (partition: number) =>
      Number(committed?.partitions.find((c) => c.partition === partition)?.offset ?? -1);
    return ends.every((e) => Number(e.high) === 0 || at(e.partition) >= Number(e.high));
  });
  await admin.disconnect();
  expect(await getJob(p, flaky.id)).toMatchObject({ state: 'SUCCEEDED', attempt: 3, fence: 3 });
  expect(await getJob(p, exhausted.id)).toMatchObject({ state: 'FAILED', attempt: 3 });

  // Dead letters arrive through the outbox on kairos.dlq.<class>, keyed by job id.
  await eventually('the dead letters to be published', async () => {
    const [critical, io] = await Promise.all([deadLetters(p, 'critical'), deadLetters(p, 'io')]);
    return critical.length >= 1 && io.length >= 1;
  });
  // Nothing more arrives (one entry per job, however often its result is seen).
  await new Promise((r) => setTimeout(r, 2000));
  const critical = await deadLetters(p, 'critical');
  const io = await deadLetters(p, 'io');
  expect(await deadLetters(p, 'default')).toEqual([]);
  // A type no worker handles is not a failure: it waits for a service that handles it.
  expect(critical.map((d) => d.key)).toEqual([permanent.id]);
  expect(io.map((d) => d.key)).toEqual([exhausted.id]);

  const perm = critical.find((d) => d.key === permanent.id)!.entry;
  expect(perm).toMatchObject({
    job_id: permanent.id,
    tenant_id: 'acme',
    job_type: 'retry.permanent',
    resource_class: 'critical',
    payload: '{}',
    attempts: 1,
    max_attempts: 5,
    failure_class: 'permanent',
    reason: 'permanent',
  });
  expect(perm.error_history).toHaveLength(1);
  expect(perm.error_history[0]).toMatchObject({
    attempt: 1,
    fence: 1,
    worker_id: worker.workerId,
    error_class: 'PermanentError',
    failure_class: 'permanent',
    message: 'no such recipient',
  });

  const ex = io[0]!.entry;
  expect(ex).toMatchObject({
    job_id: exhausted.id,
    job_type: 'retry.exhausted',
    resource_class: 'io',
    payload: '{"to":"a@example.com"}',
    attempts: 3,
    max_attempts: 3,
    failure_class: 'transient',
    reason: 'exhausted',
  });
  expect(
    ex.error_history.map((e) => [e.attempt, e.fence, e.error_class, e.failure_class, e.message]),
  ).toEqual([
    [1, 1, 'TransientError', 'transient', '503 on attempt 1'],
    [2, 2, 'Error', 'ambiguous', 'socket closed after the request was sent'],
    [3, 3, 'TransientError', 'transient', '503 on attempt 3'],
  ]);
  for (const e of ex.error_history) expect(e.finished_at).toBeGreaterThanOrEqual(e.started_at);
  expect(ex.failed_at).toBeGreaterThanOrEqual(ex.error_history[2]!.finished_at);

  // The entries' schema is registered under kairos.dlq.<class>-value.
  const subject = await fetch(
    `${ns.services.registryUrl}/subjects/${encodeURIComponent(`${p.topics.dlq('io')}-value`)}/versions/latest`,
  );
  expect(subject.status).toBe(200);
  expect(JSON.parse(((await subject.json()) as { schema: string }).schema)).toMatchObject({
    name: 'DlqEntry',
  });
}, 240_000);

test('a retry survives tracker restarts: a failure seen while it was down, and a retry dispatched while it was down', async () => {
  const ns = await useNamespace('retries-restart');
  const p = await startPipeline(ns);
  const runs = new Runs();
  const worker = p.worker();
  worker.handle('retry.once', (_payload, ctx) => {
    if (runs.record(ctx).length === 1) throw new TransientError('first attempt fails');
  });
  await worker.start();
  const tracker = () => {
    const t = new Tracker({
      kafka: ns.kafka,
      codec: p.codec,
      pool: p.pool,
      topics: p.topics,
      resourceClasses: RESOURCE_CLASSES,
      groupId: `${ns.prefix}tracker`,
    });
    ns.defer(() => t.stop());
    return t;
  };

  // The tracker is down when the first attempt fails: its result waits in Kafka.
  await p.tracker.stop();
  const job = await createJob(p, {
    type: 'retry.once',
    resource_class: 'default',
    retry: { base_ms: 3000, cap_ms: 3000, jitter_ms: 0 },
  });
  await eventually('the first attempt to run', () => runs.of(job.id).length === 1);
  await new Promise((r) => setTimeout(r, 1000));
  expect((await getJob(p, job.id)).attempt).toBe(1);

  // A new tracker applies it: the retry is in PostgreSQL (and its event in the outbox) at once.
  const second = tracker();
  await second.start();
  await eventually('the retry to be scheduled', async () => {
    const j = await getJob(p, job.id);
    return j.state === 'SCHEDULED' && j.attempt === 2;
  });
  // ... and the tracker goes down again before the retry is due: the delay tier still runs it.
  await second.stop();
  await eventually('the second attempt to run', () => runs.of(job.id).length === 2, 30_000);
  expect(runs.of(job.id).map((r) => r.fence)).toEqual([1, 2]);
  expect(gaps(runs.of(job.id))[0]).toBeGreaterThanOrEqual(3000);

  const third = tracker();
  await third.start();
  await eventually('the job to succeed', async () => (await getJob(p, job.id)).state === 'SUCCEEDED');
  expect(await getJob(p, job.id)).toMatchObject({ attempt: 2, fence: 2, last_error: 'first attempt fails' });
  expect(await deadLetters(p, 'default')).toEqual([]);
}, 240_000);
