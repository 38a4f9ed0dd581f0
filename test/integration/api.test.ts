import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { shardOf } from '@kairos/core';
import type { JobEventRecord } from '@kairos/schemas';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

interface Problem {
  type: string;
  title: string;
  code: string;
  status: number;
  detail: string;
  errors?: { field: string; message: string }[];
}

interface JobView {
  id: string;
  tenant: string;
  type: string;
  resource_class: string;
  payload: unknown;
  state: string;
  due_at: string;
  deadline_at: string | null;
  idempotency_key: string | null;
  max_attempts: number;
  attempt: number;
  fence: number;
  version: number;
  shard: number;
  created_at: string;
  created?: boolean;
}

interface Reply<T> {
  status: number;
  contentType: string;
  body: T;
}

/** One hour ahead: nothing created here ever becomes due while the test runs. */
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

const job = (extra: Record<string, unknown> = {}) => ({
  tenant: 'acme',
  type: 'email.send',
  resource_class: 'default',
  payload: { to: 'a@example.com' },
  due_at: inAnHour(),
  ...extra,
});

/** Sends a request; `body` is JSON-encoded unless it is already a string (sent as is). */
async function call<T>(
  p: Pipeline,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Reply<T>> {
  const auth = { authorization: `Bearer ${p.apiKey}` };
  const res = await fetch(`${p.apiUrl}${path}`, {
    method,
    ...(body === undefined
      ? { headers: auth }
      : {
          headers: { 'content-type': contentType, ...auth },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    body: (text === '' ? undefined : JSON.parse(text)) as T,
  };
}

/** The RFC 9457 shape every error answer has; returns the failing field names. */
function expectProblem(reply: Reply<unknown>, status: number | number[]): string[] {
  const statuses = Array.isArray(status) ? status : [status];
  expect(statuses, JSON.stringify(reply.body)).toContain(reply.status);
  expect(reply.contentType).toMatch(/^application\/problem\+json/);
  const problem = reply.body as Problem;
  expect(problem).toMatchObject({
    status: reply.status,
    code: expect.any(String),
    detail: expect.any(String),
  });
  return (problem.errors ?? []).map((e) => {
    expect(e).toEqual({ field: expect.any(String), message: expect.any(String) });
    return e.field;
  });
}

/**
 * Every outbox insert is recorded by a trigger in the test's schema (the outbox rows themselves
 * are deleted in the inserting transaction, so counting them would always give zero).
 */
async function auditOutbox(p: Pipeline): Promise<void> {
  const s = `"${p.ns.schema}"`;
  await p.pool.query(`
    CREATE TABLE ${s}.outbox_audit (
      id uuid NOT NULL, job_id text NOT NULL, type text NOT NULL, payload bytea NOT NULL
    );
    CREATE FUNCTION ${s}.outbox_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.outbox_audit (id, job_id, type, payload) VALUES (NEW.id, NEW.job_id, NEW.type, NEW.payload);
      RETURN NEW;
    END $$;
    -- The connector's heartbeat rows (every few seconds) are not the API's doing.
    CREATE TRIGGER outbox_audit AFTER INSERT ON ${s}.outbox FOR EACH ROW
      WHEN (NEW.aggregatetype <> 'heartbeat') EXECUTE FUNCTION ${s}.outbox_audit();
  `);
}

async function counts(p: Pipeline): Promise<{ jobs: number; keys: number; events: number }> {
  const r = await p.pool.query<{ jobs: number; keys: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM jobs) AS jobs,
            (SELECT count(*)::int FROM job_idempotency) AS keys,
            (SELECT count(*)::int FROM outbox_audit) AS events`,
  );
  return r.rows[0]!;
}

async function start(label: string): Promise<Pipeline> {
  const p = await startPipeline(await useNamespace(label));
  await auditOutbox(p);
  return p;
}

test('POST /v1/jobs with bad input: 400 problem+json naming each failing field, nothing created', async () => {
  const p = await start('api-bad-input');
  const { type: _type, ...noType } = job();
  const cases: { what: string; body: unknown; contentType?: string; field: string }[] = [
    { what: 'missing type', body: noType, field: 'type' },
    { what: 'unknown resource class', body: job({ resource_class: 'gpu' }), field: 'resource_class' },
    { what: 'due_at not a date', body: job({ due_at: 'tomorrow' }), field: 'due_at' },
    { what: 'due_at without an offset', body: job({ due_at: '2030-01-01T00:00:00' }), field: 'due_at' },
    {
      what: 'due_at too far in the past',
      body: job({ due_at: new Date(Date.now() - 2 * 24 * 3600_000).toISOString() }),
      field: 'due_at',
    },
    { what: 'due_at and delay_ms both', body: job({ delay_ms: 1000 }), field: 'due_at' },
    { what: 'unknown extra field', body: job({ priority: 5 }), field: 'priority' },
    { what: 'tenant with a space', body: job({ tenant: 'a b' }), field: 'tenant' },
    { what: 'max_attempts zero', body: job({ max_attempts: 0 }), field: 'max_attempts' },
    { what: 'max_attempts over the ceiling', body: job({ max_attempts: 101 }), field: 'max_attempts' },
    {
      what: 'deadline before the due time',
      body: job({ deadline_at: new Date(Date.now() + 60_000).toISOString() }),
      field: 'deadline_at',
    },
    {
      what: 'payload one byte over 65,536 as JSON',
      // {"b":"…"} is 8 bytes plus the string.
      body: job({ payload: { b: 'x'.repeat(65_536 - 8 + 1) } }),
      field: 'payload',
    },
    {
      what: 'payload under 65,536 characters but over 65,536 UTF-8 bytes',
      body: job({ payload: { b: 'é'.repeat(32_765) } }),
      field: 'payload',
    },
    { what: 'malformed JSON', body: '{"tenant": "acme",', field: '(body)' },
    { what: 'a JSON array', body: '[]', field: '(body)' },
    { what: 'JSON null', body: 'null', field: '(body)' },
    { what: 'plain text', body: 'hello', contentType: 'text/plain', field: '(body)' },
  ];
  for (const c of cases) {
    const reply = await call(p, 'POST', '/v1/jobs', c.body, c.contentType);
    const fields = expectProblem(reply, 400);
    expect(fields, c.what).toContain(c.field);
  }

  // Every failing field of one request is reported, not just the first.
  const many = await call(p, 'POST', '/v1/jobs', {
    ...noType,
    resource_class: 'gpu',
    due_at: 'soon',
    extra: true,
  });
  const fields = expectProblem(many, 400);
  expect((many.body as Problem).code).toBe('VALIDATION');
  expect(fields).toEqual(expect.arrayContaining(['type', 'due_at', 'extra']));

  expect(await counts(p)).toEqual({ jobs: 0, keys: 0, events: 0 });

  // The payload limit is inclusive: exactly 65,536 bytes is accepted (and the audit sees its event).
  const atLimit = await call<JobView>(p, 'POST', '/v1/jobs', job({ payload: { b: 'x'.repeat(65_536 - 8) } }));
  expect(atLimit.status).toBe(201);
  expect(await counts(p)).toEqual({ jobs: 1, keys: 0, events: 1 });
});

test('POST /v1/jobs:batch with one invalid job of three: 400 naming jobs.1.<field>, none created', async () => {
  const p = await start('api-batch-invalid');
  const reply = await call(p, 'POST', '/v1/jobs:batch', {
    jobs: [
      job({ idempotency_key: 'first' }),
      job({ resource_class: 'gpu', idempotency_key: 'second' }),
      job({ idempotency_key: 'third' }),
    ],
  });
  const fields = expectProblem(reply, 400);
  expect(fields).toEqual(['jobs.1.resource_class']);
  expect(await counts(p)).toEqual({ jobs: 0, keys: 0, events: 0 });

  // Several bad jobs: every one is named with its own index.
  const { type: _type, ...noType } = job();
  const two = await call(p, 'POST', '/v1/jobs:batch', { jobs: [noType, job(), job({ due_at: 'x' })] });
  expect(expectProblem(two, 400)).toEqual(['jobs.0.type', 'jobs.2.due_at']);

  // A body that is not {"jobs": [...]} or holds no jobs.
  for (const body of [{}, { jobs: {} }, { jobs: [] }, [job()]]) {
    expect(expectProblem(await call(p, 'POST', '/v1/jobs:batch', body), 400)).toEqual(['jobs']);
  }
  expect(await counts(p)).toEqual({ jobs: 0, keys: 0, events: 0 });

  // The same three, all valid, go in together.
  const ok = await call<{ jobs: JobView[] }>(p, 'POST', '/v1/jobs:batch', {
    jobs: [job(), job({ resource_class: 'io' }), job()],
  });
  expect(ok.status).toBe(201);
  expect(ok.body.jobs.map((j) => [j.resource_class, j.created])).toEqual([
    ['default', true],
    ['io', true],
    ['default', true],
  ]);
  expect(await counts(p)).toEqual({ jobs: 3, keys: 0, events: 3 });
});

test('idempotency keys: a retry returns the original job, tenants are separate, batch duplicates share a job', async () => {
  const p = await start('api-idempotency');
  const first = await call<JobView>(p, 'POST', '/v1/jobs', job({ idempotency_key: 'k1', payload: { n: 1 } }));
  expect(first.status).toBe(201);
  // A retry, even with a different payload, answers with the original job.
  const retry = await call<JobView>(p, 'POST', '/v1/jobs', job({ idempotency_key: 'k1', payload: { n: 2 } }));
  expect(retry.status).toBe(200);
  expect(retry.body.id).toBe(first.body.id);
  expect(retry.body).toMatchObject({ payload: { n: 1 }, idempotency_key: 'k1', state: 'SCHEDULED' });
  expect(await counts(p)).toEqual({ jobs: 1, keys: 1, events: 1 });

  // The same key under another tenant is another job.
  const other = await call<JobView>(p, 'POST', '/v1/jobs', job({ tenant: 'globex', idempotency_key: 'k1' }));
  expect(other.status).toBe(201);
  expect(other.body.id).not.toBe(first.body.id);
  expect(other.body.tenant).toBe('globex');
  expect(await counts(p)).toEqual({ jobs: 2, keys: 2, events: 2 });

  // Duplicate keys inside one batch: the first wins, the later one gets its job.
  const batch = await call<{ jobs: JobView[] }>(p, 'POST', '/v1/jobs:batch', {
    jobs: [
      job({ idempotency_key: 'b1', payload: { n: 'first' } }),
      job({ idempotency_key: 'b1', payload: { n: 'second' } }),
      job(),
      job({ idempotency_key: 'k1' }),
    ],
  });
  expect(batch.status).toBe(201);
  const [b0, b1, b2, b3] = batch.body.jobs;
  expect(b1!.id).toBe(b0!.id);
  expect([b0!.created, b1!.created, b2!.created, b3!.created]).toEqual([true, false, true, false]);
  expect(b1!.payload).toEqual({ n: 'first' });
  expect(b2!.id).not.toBe(b0!.id);
  // A key claimed by an earlier request returns that request's job.
  expect(b3!.id).toBe(first.body.id);
  expect(await counts(p)).toEqual({ jobs: 4, keys: 3, events: 4 });

  // Concurrent retries of one new key race for it: exactly one creates the job.
  const racers = await Promise.all(
    Array.from({ length: 8 }, () => call<JobView>(p, 'POST', '/v1/jobs', job({ idempotency_key: 'race' }))),
  );
  expect(racers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
  expect(new Set(racers.map((r) => r.body.id)).size).toBe(1);
  expect(await counts(p)).toEqual({ jobs: 5, keys: 4, events: 5 });
});

test('GET /v1/jobs/{id}: the job view; unknown id 404, malformed id 400', async () => {
  const p = await start('api-get');
  const dueAt = inAnHour();
  const created = await call<JobView>(
    p,
    'POST',
    '/v1/jobs',
    job({ payload: { to: 'b@example.com', n: [1, 2] }, due_at: dueAt }),
  );
  expect(created.status).toBe(201);
  expect(created.contentType).toMatch(/^application\/json/);

  const got = await call<JobView>(p, 'GET', `/v1/jobs/${created.body.id}`);
  expect(got.status).toBe(200);
  expect(got.contentType).toMatch(/^application\/json/);
  expect(got.body).toMatchObject({
    id: created.body.id,
    tenant: 'acme',
    type: 'email.send',
    resource_class: 'default',
    payload: { to: 'b@example.com', n: [1, 2] },
    state: 'SCHEDULED',
    due_at: dueAt,
    deadline_at: null,
    idempotency_key: null,
    max_attempts: 3,
    attempt: 1,
    fence: 1,
    version: 1,
    shard: shardOf(created.body.id, p.ns.services.jobEventPartitions),
  });
  expect(got.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Date(got.body.created_at).toISOString()).toBe(got.body.created_at);
  expect(got.body).toEqual(created.body);

  const unknown = await call(p, 'GET', `/v1/jobs/${randomUUID()}`);
  expectProblem(unknown, 404);
  expect((unknown.body as Problem).code).toBe('NOT_FOUND');

  for (const bad of ['not-a-uuid', '123', `${created.body.id}x`]) {
    const reply = await call(p, 'GET', `/v1/jobs/${bad}`);
    expect(expectProblem(reply, 400), bad).toEqual(['id']);
  }
});

test('DELETE /v1/jobs/{id}: cancels a scheduled job once (version 2); again 409; unknown 404', async () => {
  const p = await start('api-cancel');
  const created = await call<JobView>(p, 'POST', '/v1/jobs', job());
  expect(created.status).toBe(201);
  const id = created.body.id;

  const cancelled = await call<JobView>(p, 'DELETE', `/v1/jobs/${id}`);
  expect(cancelled.status).toBe(200);
  expect(cancelled.body).toMatchObject({ id, state: 'CANCELLED', version: 2 });
  expect(cancelled.body.due_at).toBe(created.body.due_at);
  expect((await call<JobView>(p, 'GET', `/v1/jobs/${id}`)).body).toMatchObject({
    state: 'CANCELLED',
    version: 2,
  });

  const again = await call(p, 'DELETE', `/v1/jobs/${id}`);
  expectProblem(again, 409);
  expect((again.body as Problem).code).toBe('CONFLICT');
  expect((again.body as Problem).detail).toContain('CANCELLED');

  const unknown = await call(p, 'DELETE', `/v1/jobs/${randomUUID()}`);
  expectProblem(unknown, 404);
  expect(expectProblem(await call(p, 'DELETE', '/v1/jobs/nope'), 400)).toEqual(['id']);

  // One JobScheduled and one JobCancelled event; the refused cancels wrote nothing.
  const events = await p.pool.query<{ type: string; job_id: string }>(
    'SELECT type, job_id FROM outbox_audit',
  );
  expect(events.rows.map((e) => [e.type, e.job_id]).sort()).toEqual([
    ['JobCancelled', id],
    ['JobScheduled', id],
  ]);
  expect(await counts(p)).toEqual({ jobs: 1, keys: 0, events: 2 });
});

/** The job events recorded for one job, decoded, in version order. */
async function jobEvents(p: Pipeline, id: string): Promise<{ type: string; event: JobEventRecord }[]> {
  const rows = await p.pool.query<{ type: string; payload: Buffer }>(
    'SELECT type, payload FROM outbox_audit WHERE job_id = $1',
    [id],
  );
  const events = await Promise.all(
    rows.rows.map(async (r) => ({
      type: r.type,
      event: (await p.codec.decode(p.topics.jobEvents, r.payload)) as JobEventRecord,
    })),
  );
  return events.sort((a, b) => Number(a.event.version) - Number(b.event.version));
}

test('POST /v1/jobs/{id}/reschedule: moves a scheduled job, bumps its version, writes a SCHEDULED event; the new time is the one dispatched', async () => {
  const p = await start('api-reschedule');
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();
  const deadline = at(3 * 3600_000);
  const created = await call<JobView>(
    p,
    'POST',
    '/v1/jobs',
    job({ deadline_at: deadline, idempotency_key: 'moving' }),
  );
  expect(created.status).toBe(201);
  const id = created.body.id;

  // A new due_at; the deadline is kept when the body does not name it.
  const dueAt = at(2 * 3600_000);
  const moved = await call<JobView>(p, 'POST', `/v1/jobs/${id}/reschedule`, { due_at: dueAt });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  expect(moved.contentType).toMatch(/^application\/json/);
  expect(moved.body).toEqual({ ...created.body, due_at: dueAt, deadline_at: deadline, version: 2 });
  expect((await call<JobView>(p, 'GET', `/v1/jobs/${id}`)).body).toEqual(moved.body);
  // The idempotency key follows the job to its new due time.
  const key = await p.pool.query<{ due_at: Date }>('SELECT due_at FROM job_idempotency WHERE job_id = $1', [
    id,
  ]);
  expect(key.rows.map((r) => r.due_at.toISOString())).toEqual([dueAt]);

  // delay_ms counts from now; deadline_at null clears the deadline.
  const before = Date.now();
  const later = await call<JobView>(p, 'POST', `/v1/jobs/${id}/reschedule`, {
    delay_ms: 4 * 3600_000,
    deadline_at: null,
  });
  expect(later.status, JSON.stringify(later.body)).toBe(200);
  expect(later.body).toMatchObject({ id, state: 'SCHEDULED', deadline_at: null, version: 3 });
  expect(Date.parse(later.body.due_at)).toBeGreaterThanOrEqual(before + 4 * 3600_000);
  expect(Date.parse(later.body.due_at)).toBeLessThanOrEqual(Date.now() + 4 * 3600_000);

  // Every change is a JobScheduled event carrying the job's new due time, deadline and version.
  const events = await jobEvents(p, id);
  expect(
    events.map((e) => [e.type, e.event.event_type, Number(e.event.version), Number(e.event.due_at)]),
  ).toEqual([
    ['JobScheduled', 'SCHEDULED', 1, Date.parse(created.body.due_at)],
    ['JobScheduled', 'SCHEDULED', 2, Date.parse(dueAt)],
    ['JobScheduled', 'SCHEDULED', 3, Date.parse(later.body.due_at)],
  ]);
  expect(events.map((e) => (e.event.deadline_at === null ? null : Number(e.event.deadline_at)))).toEqual([
    Date.parse(deadline),
    Date.parse(deadline),
    null,
  ]);

  // Moved to now, the job is dispatched with the latest version (the hot set took the new entry);
  // once dispatched it can no longer be rescheduled.
  const now = await call<JobView>(p, 'POST', `/v1/jobs/${id}/reschedule`, { delay_ms: 0 });
  expect(now.body).toMatchObject({ id, state: 'SCHEDULED', version: 4 });
  await eventually(
    'the rescheduled job to be dispatched',
    () => Promise.resolve(p.dispatched.some((d) => d.record.job_id === id)),
    90_000,
  );
  expect(p.dispatched.filter((d) => d.record.job_id === id).map((d) => Number(d.record.version))).toEqual([
    4,
  ]);
  await eventually(
    'the job to leave SCHEDULED',
    async () => (await call<JobView>(p, 'GET', `/v1/jobs/${id}`)).body.state !== 'SCHEDULED',
  );
  const dispatched = await call(p, 'POST', `/v1/jobs/${id}/reschedule`, { delay_ms: 60_000 });
  expectProblem(dispatched, 409);
  expect((dispatched.body as Problem).detail).toMatch(/only a SCHEDULED job can be rescheduled/);
  expect((await jobEvents(p, id)).length).toBe(4);
});

test('POST /v1/jobs/{id}/reschedule with bad input: 400 naming the field, 404 unknown, 409 cancelled; nothing changed', async () => {
  const p = await start('api-reschedule-bad');
  const deadline = new Date(Date.now() + 2 * 3600_000).toISOString();
  const created = await call<JobView>(p, 'POST', '/v1/jobs', job({ deadline_at: deadline }));
  expect(created.status).toBe(201);
  const id = created.body.id;
  const path = `/v1/jobs/${id}/reschedule`;
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();

  const cases: { what: string; path?: string; body: unknown; contentType?: string; field: string }[] = [
    { what: 'due_at and delay_ms both', body: { due_at: at(60_000), delay_ms: 1000 }, field: 'due_at' },
    { what: 'neither due_at nor delay_ms', body: {}, field: 'due_at' },
    { what: 'only a deadline', body: { deadline_at: at(3 * 3600_000) }, field: 'due_at' },
    {
      what: 'deadline_at before the new due time',
      body: { due_at: at(60_000), deadline_at: at(30_000) },
      field: 'deadline_at',
    },
    {
      what: 'the kept deadline before the new due time',
      body: { delay_ms: 3 * 3600_000 },
      field: 'deadline_at',
    },
    { what: 'unknown extra field', body: { delay_ms: 1000, priority: 5 }, field: 'priority' },
    { what: 'a field reschedule cannot change', body: { delay_ms: 1000, payload: {} }, field: 'payload' },
    { what: 'due_at not a date', body: { due_at: 'tomorrow' }, field: 'due_at' },
    { what: 'due_at without an offset', body: { due_at: '2030-01-01T00:00:00' }, field: 'due_at' },
    {
      what: 'due_at too far in the past',
      body: { due_at: new Date(Date.now() - 2 * 24 * 3600_000).toISOString() },
      field: 'due_at',
    },
    { what: 'delay_ms negative', body: { delay_ms: -1 }, field: 'delay_ms' },
    { what: 'deadline_at not a date', body: { delay_ms: 0, deadline_at: 'soon' }, field: 'deadline_at' },
    { what: 'malformed JSON', body: '{"delay_ms": ', field: '(body)' },
    { what: 'JSON null', body: 'null', field: '(body)' },
    { what: 'non-UUID id', path: '/v1/jobs/not-a-uuid/reschedule', body: { delay_ms: 0 }, field: 'id' },
  ];
  for (const c of cases) {
    const reply = await call(p, 'POST', c.path ?? path, c.body, c.contentType);
    expect(expectProblem(reply, 400), c.what).toContain(c.field);
    expect((reply.body as Problem).code, c.what).toBe('VALIDATION');
  }
  // The kept-deadline refusal says how to get out of it.
  const kept = await call(p, 'POST', path, { delay_ms: 3 * 3600_000 });
  expect((kept.body as Problem).errors?.[0]?.message).toMatch(/deadline_at.*null/);

  const unknown = await call(p, 'POST', `/v1/jobs/${randomUUID()}/reschedule`, { delay_ms: 0 });
  expectProblem(unknown, 404);
  expect((unknown.body as Problem).code).toBe('NOT_FOUND');

  // Nothing changed: the job is as created and only its creation event exists.
  expect((await call<JobView>(p, 'GET', `/v1/jobs/${id}`)).body).toEqual(created.body);
  expect(await counts(p)).toEqual({ jobs: 1, keys: 0, events: 1 });

  // A cancelled job cannot be rescheduled: 409 naming its state, and no event.
  expect((await call(p, 'DELETE', `/v1/jobs/${id}`)).status).toBe(200);
  const cancelled = await call(p, 'POST', path, { delay_ms: 60_000 });
  expectProblem(cancelled, 409);
  expect((cancelled.body as Problem).code).toBe('CONFLICT');
  expect((cancelled.body as Problem).detail).toContain('CANCELLED');
  expect((await call<JobView>(p, 'GET', `/v1/jobs/${id}`)).body).toMatchObject({
    state: 'CANCELLED',
    due_at: created.body.due_at,
    version: 2,
  });
  expect(await counts(p)).toEqual({ jobs: 1, keys: 0, events: 2 });
});

test('POST /v1/jobs:batch with 1,001 jobs: 400, none created; 1,000 is accepted', async () => {
  const p = await start('api-batch-limit');
  const many = (n: number) => Array.from({ length: n }, (_, i) => job({ payload: { i } }));

  const over = await call(p, 'POST', '/v1/jobs:batch', { jobs: many(1001) });
  expect(expectProblem(over, 400)).toEqual(['jobs']);
  expect((over.body as Problem).detail).toContain('1000');
  expect(await counts(p)).toEqual({ jobs: 0, keys: 0, events: 0 });

  // One job first, so the event codec has looked its schema up (see the next test for why).
  expect((await call(p, 'POST', '/v1/jobs', job())).status).toBe(201);
  const atLimit = await call<{ jobs: JobView[] }>(p, 'POST', '/v1/jobs:batch', { jobs: many(1000) });
  expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(201);
  expect(atLimit.body.jobs).toHaveLength(1000);
  expect(atLimit.body.jobs.map((j) => j.payload)).toEqual(many(1000).map((j) => j.payload));
  expect(await counts(p)).toEqual({ jobs: 1001, keys: 0, events: 1001 });
});

test('a full batch of 1,000 jobs as the first request after start is accepted', async () => {
  const p = await start('api-batch-cold');
  const jobs = Array.from({ length: 1000 }, (_, i) => job({ payload: { i } }));
  const reply = await call<{ jobs: JobView[] }>(p, 'POST', '/v1/jobs:batch', { jobs });
  // All or nothing, whatever the answer.
  expect(await counts(p)).toEqual(
    reply.status === 201 ? { jobs: 1000, keys: 0, events: 1000 } : { jobs: 0, keys: 0, events: 0 },
  );
  // Regression guard. At commit 0b7f506 this answered 500 INTERNAL after 10-20 s in most runs:
  // JobCommands.createJobs encodes all 1,000 events at once (Promise.all), and AvroCodec's
  // serializer used the client's default ASSOCIATED subject-name strategy, whose registry
  // lookup (GET /associations/resources/-/<topic>) is cached only once one returns. A cold
  // codec thus sent 1,000 parallel lookups; Apicurio left a few unanswered until the 10 s
  // client timeout. Encoding must not cost a registry round trip per event.
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
});
