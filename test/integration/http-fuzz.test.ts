import fc from 'fast-check';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// Bad input, everywhere: property-based requests to every route of the HTTP API (path, query,
// headers and bodies: any JSON value, Unicode edge cases, strings PostgreSQL cannot store, deep
// nesting, large sizes, valid requests with one field gone wrong). Every answer is below 500 and
// every 4xx is problem+json; the only rows are those of the creates that were answered 200/201.

const RUNS = Number(process.env.KAIROS_FUZZ_RUNS ?? 12_000);

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const validJob = () => ({
  tenant: 'acme',
  type: 'fuzz.job',
  resource_class: 'default',
  payload: { n: 1 },
  due_at: inAnHour(),
});
const validSchedule = () => ({
  tenant: 'acme',
  cron: '*/5 * * * *',
  time_zone: 'Europe/Paris',
  job: { type: 'fuzz.sched', resource_class: 'io', payload: {} },
});

const nested = (depth: number): unknown => (depth === 0 ? 'leaf' : [nested(depth - 1)]);

/** Strings that have broken parsers and databases. */
const nasty = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufffe',
  'é',
  '💥🧨',
  '\u202eevil',
  '',
  ' ',
  '%00',
  '../../etc/passwd',
  "'; DROP TABLE jobs; --",
  '{{7*7}}',
  'x'.repeat(70_000),
  '9'.repeat(400),
  '-1',
  '1e309',
  'NaN',
  'null',
  '2026-02-30T25:61:00Z',
);
const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), nasty);
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: text },
  { weight: 1, arbitrary: fc.integer({ min: 30, max: 3000 }).map(nested) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0, 2 ** 53, -(2 ** 63), 1.5, true, null, [], {}) },
  { weight: 1, arbitrary: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }) },
);

/** A valid body with one field (maybe nested) replaced, removed or added. */
function mutated(base: () => Record<string, unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(fc.nat(), value, fc.constantFrom('replace', 'remove', 'add', 'payload', 'whole'))
    .map(([i, v, how]) => {
      const b = base();
      const keys = Object.keys(b);
      const k = keys[i % keys.length]!;
      if (how === 'replace') return { ...b, [k]: v };
      if (how === 'remove') return Object.fromEntries(Object.entries(b).filter(([x]) => x !== k));
      if (how === 'add') return { ...b, [`extra${i % 3}`]: v };
      if (how === 'payload')
        return 'job' in b ? { ...b, job: { ...(b.job as object), payload: v } } : { ...b, payload: v };
      return v;
    });
}

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly raw?: string;
  readonly headers: Record<string, string>;
}

/** Every byte of the string's UTF-8 percent-encoded (lone surrogates become U+FFFD, as on the wire). */
const pct = (s: string) =>
  [...new TextEncoder().encode(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const id = fc.oneof(fc.uuid(), text.map(pct), fc.constant('%ZZ'));
const query = fc
  .dictionary(
    fc.constantFrom(
      'tenant',
      'state',
      'type',
      'limit',
      'cursor',
      'due_after',
      'error',
      'count',
      'after',
      'before',
      'x',
    ),
    text,
    { maxKeys: 4 },
  )
  .map((q) => {
    const s = new URLSearchParams(q).toString();
    return s === '' ? '' : `?${s}`;
  });
const headers = fc.record(
  {
    'content-type': fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'application/json; charset=latin1',
          'application/merge-patch+json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/xml',
        ),
      },
    ),
    'if-match': fc.oneof(fc.constantFrom('"1"', '*', '"-3"', 'W/"2"'), fc.string({ maxLength: 10 })),
    traceparent: fc.oneof(
      fc.constant('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
      fc.string({ maxLength: 60 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    ),
  },
  { requiredKeys: ['content-type'] },
);

function calls(ids: { job: string; schedule: string }): fc.Arbitrary<Call> {
  const withBody = (method: string, path: fc.Arbitrary<string>, body: fc.Arbitrary<unknown>) =>
    fc.record({ method: fc.constant(method), path, body, headers });
  const raw = fc.record({
    method: fc.constantFrom('POST', 'PUT', 'PATCH'),
    path: fc.constantFrom('/v1/jobs', '/v1/jobs:batch', '/v1/schedules', `/v1/schedules/${ids.schedule}`),
    raw: fc.oneof(text, fc.constantFrom('{', '[1,', '{"a":1}{', '\u0000', '{"tenant":"acme"'.repeat(2))),
    headers,
  });
  const some = <T>(a: fc.Arbitrary<T>, b: T) =>
    fc.oneof({ weight: 1, arbitrary: a }, { weight: 3, arbitrary: fc.constant(b) });
  const sid = some(id, ids.schedule);
  const jid = some(id, ids.job);
  return fc.oneof(
    withBody(
      'POST',
      query.map((q) => `/v1/jobs${q}`),
      mutated(validJob),
    ),
    withBody(
      'POST',
      fc.constant('/v1/jobs:batch'),
      fc.oneof(
        mutated(validJob).map((j) => ({ jobs: [validJob(), j] })),
        value,
      ),
    ),
    withBody(
      'POST',
      jid.map((j) => `/v1/jobs/${j}/reschedule`),
      mutated(() => ({ delay_ms: 7200_000 })),
    ),
    withBody('POST', fc.constant('/v1/schedules'), mutated(validSchedule)),
    withBody(
      'POST',
      query.map((q) => `/v1/schedules:preview${q}`),
      mutated(validSchedule),
    ),
    withBody(
      'PUT',
      sid.map((s) => `/v1/schedules/${s}`),
      mutated(validSchedule),
    ),
    withBody(
      'PATCH',
      sid.map((s) => `/v1/schedules/${s}`),
      mutated(() => ({ jitter_ms: 1000 })),
    ),
    withBody(
      'POST',
      sid.map((s) => `/v1/schedules/${s}/resume`),
      mutated(() => ({ catch_up: false })),
    ),
    withBody(
      'POST',
      sid.map((s) => `/v1/schedules/${s}/trigger`),
      mutated(() => ({ idempotency_key: 't' })),
    ),
    withBody(
      'POST',
      sid.map((s) => `/v1/schedules/${s}/backfill`),
      mutated(() => ({ from: new Date(Date.now() - 7200_000).toISOString(), to: new Date().toISOString() })),
    ),
    withBody(
      'POST',
      fc.constant('/v1/keys'),
      mutated(() => ({ name: 'k', tenant: 'acme', scopes: ['jobs:read'] })),
    ),
    withBody(
      'POST',
      fc.constant('/v1/dead-letters:replay'),
      mutated(() => ({ filter: { tenant: 'acme', type: 'fuzz.job' }, dry_run: true, rate_per_sec: 10 })),
    ),
    fc.record({ method: fc.constant('POST'), path: jid.map((j) => `/v1/jobs/${j}/rerun`), headers }),
    fc.record({ method: fc.constant('POST'), path: id.map((r) => `/v1/replays/${r}/cancel`), headers }),
    fc.record({
      method: fc.constant('GET'),
      path: fc.oneof(
        query.map((q) => `/v1/jobs${q}`),
        query.map((q) => `/v1/jobs:counts${q}`),
        query.map((q) => `/v1/dead-letters${q}`),
        query.map((q) => `/v1/schedules${q}`),
        fc.tuple(jid, query).map(([j, q]) => `/v1/jobs/${j}${q}`),
        jid.map((j) => `/v1/jobs/${j}/attempts`),
        fc.tuple(sid, query).map(([s, q]) => `/v1/schedules/${s}/preview${q}`),
        fc.tuple(sid, query).map(([s, q]) => `/v1/schedules/${s}/runs${q}`),
        id.map((s) => `/v1/schedules/${s}`),
        id.map((r) => `/v1/replays/${r}`),
        fc.constant('/v1/replays'),
      ),
      headers,
    }),
    fc.record({
      method: fc.constant('DELETE'),
      path: fc.oneof(
        id.map((j) => `/v1/jobs/${j}`),
        id.map((s) => `/v1/schedules/${s}`),
        id.map((k) => `/v1/keys/${k}`),
      ),
      headers,
    }),
    fc.record({ method: fc.constant('POST'), path: id.map((s) => `/v1/schedules/${s}/pause`), headers }),
    raw,
  );
}

/** Sends a call; the JSON answer and the ids of whatever it created. */
async function send(p: Pipeline, c: Call) {
  const body = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
  const res = await fetch(`${p.apiUrl}${c.path}`, {
    method: c.method,
    headers: { ...c.headers, authorization: `Bearer ${p.apiKey}` },
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', text };
}

test(`fuzz: ${RUNS.toLocaleString('en')} generated requests over every route: no 5xx, every 4xx problem+json, no row from a refused one`, async () => {
  const ns = await useNamespace('http-fuzz');
  const p = await startPipeline(ns, { generator: false });
  const auth = { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' };
  const job = (await (
    await fetch(`${p.apiUrl}/v1/jobs`, { method: 'POST', headers: auth, body: JSON.stringify(validJob()) })
  ).json()) as { id: string };
  const sched = (await (
    await fetch(`${p.apiUrl}/v1/schedules`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(validSchedule()),
    })
  ).json()) as { id: string };
  const jobs = new Set([job.id]);
  const schedules = new Set([sched.id]);
  const statuses = new Map<number, number>();
  const seed = Number(process.env.KAIROS_FUZZ_SEED ?? Date.now() % 2 ** 31);
  console.log(`[http-fuzz] seed ${seed} (replay with KAIROS_FUZZ_SEED=${seed})`);

  await fc.assert(
    fc.asyncProperty(calls({ job: job.id, schedule: sched.id }), async (c) => {
      const r = await send(p, c);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      expect(r.status, `${c.method} ${c.path}: ${r.text.slice(0, 300)}`).toBeLessThan(500);
      if (r.status >= 400) {
        expect(r.type, `${c.method} ${c.path} → ${r.status} ${r.text.slice(0, 200)}`).toMatch(
          /^application\/problem\+json/,
        );
        expect(JSON.parse(r.text)).toHaveProperty('code');
        return;
      }
      // What a successful create made: one-time jobs and schedules (schedule runs are not counted).
      const out = JSON.parse(r.text) as {
        id?: string;
        jobs?: { id: string }[];
        cron?: string;
        schedule_id?: string | null;
      };
      if (c.method === 'POST' && c.path.startsWith('/v1/jobs:batch'))
        for (const j of out.jobs ?? []) jobs.add(j.id);
      else if (c.method === 'POST' && /^\/v1\/jobs(\?|$)/.test(c.path) && out.id) jobs.add(out.id);
      else if (c.method === 'POST' && /^\/v1\/schedules(\?|$)/.test(c.path) && out.id) schedules.add(out.id);
    }),
    { numRuns: RUNS, seed, endOnFailure: true },
  );
  console.log(`[http-fuzz] answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  const one = await p.pool.query<{ n: string }>('SELECT count(*) AS n FROM jobs WHERE schedule_id IS NULL');
  expect(Number(one.rows[0]!.n)).toBe(jobs.size);
  const all = await p.pool.query<{ n: string }>('SELECT count(*) AS n FROM schedules');
  expect(Number(all.rows[0]!.n)).toBe(schedules.size);
  // Most inputs are refused, some are valid: both sides were exercised.
  expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
  expect(jobs.size).toBeGreaterThan(1);
}, 900_000);
