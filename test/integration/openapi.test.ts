import { randomUUID } from 'node:crypto';
import { apiRoutes } from '@kairos/api';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

// The OpenAPI document cannot drift from the API: every route is in it and every operation is a
// route; every answer below (a success and each documented error of every route) has a status
// the document lists for its operation and a body its schema accepts. 503 (a dependency down)
// is documented on every route and exercised by the outage tests, not here.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

interface Sent {
  readonly method: string;
  /** The document's path template, e.g. /v1/jobs/{id}. */
  readonly template: string;
  readonly status: number;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Fastify's `/v1/jobs/:id` and `/v1/jobs::batch` as the document writes them. */
const templateOf = (url: string) => url.replace(/::/g, ':').replace(/\/:([a-z_]+)/g, '/{$1}');

const pointer = (...parts: string[]) =>
  parts.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

class Checker {
  readonly sent: Sent[] = [];
  readonly #ajv = new Ajv2020({ strict: false, validateFormats: false });
  readonly #templates: { template: string; re: RegExp }[];

  constructor(
    readonly p: Pipeline,
    readonly doc: Doc,
  ) {
    this.#ajv.addSchema(doc as object, 'openapi');
    this.#templates = Object.keys(doc.paths as object).map((template) => ({
      template,
      re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '[^/]+')}$`),
    }));
  }

  /** Sends a request and checks its answer against the document. */
  async send(
    method: string,
    path: string,
    o: { key?: string | null; body?: unknown; raw?: string; contentType?: string } = {},
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    const key = o.key === undefined ? this.p.apiKey : o.key;
    const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
    const body = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
    if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
    const res = await fetch(`${this.p.apiUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!;
    const json = (text === '' ? null : JSON.parse(text)) as Record<string, unknown>;
    const bare = path.split('?')[0]!;
    const t = this.#templates.find((x) => x.re.test(bare));
    expect(t, `${method} ${bare} is in the document`).toBeDefined();
    const op = this.doc.paths[t!.template][method.toLowerCase()];
    expect(op, `${method} ${t!.template} is in the document`).toBeDefined();
    const label = `${method} ${path} → ${res.status} ${text.slice(0, 300)}`;
    expect(Object.keys(op.responses as object), label).toContain(String(res.status));
    const schemaPath = pointer(
      'paths',
      t!.template,
      method.toLowerCase(),
      'responses',
      String(res.status),
      'content',
      type,
      'schema',
    );
    const validate = this.#ajv.getSchema(`openapi#/${schemaPath}`);
    expect(validate, `${label}: documented content type ${type}`).toBeDefined();
    expect(validate!(json), `${label}: ${JSON.stringify(validate!.errors)}`).toBe(true);
    this.sent.push({ method: method.toLowerCase(), template: t!.template, status: res.status });
    return { status: res.status, json };
  }
}

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const job = () => ({
  tenant: 'acme',
  type: 'doc.check',
  resource_class: 'default',
  payload: { a: 1 },
  due_at: inAnHour(),
});
const schedule = () => ({
  tenant: 'acme',
  cron: '0 9 * * *',
  time_zone: 'Europe/Paris',
  job: { type: 'doc.daily', resource_class: 'default', payload: {} },
});

test('the OpenAPI 3.1 document matches the API: every route, every documented answer', async () => {
  const ns = await useNamespace('openapi');
  const p = await startPipeline(ns);
  const docRes = await fetch(`${p.apiUrl}/openapi.json`);
  expect(docRes.status).toBe(200);
  const doc = (await docRes.json()) as Doc;
  expect(doc.openapi).toBe('3.1.0');
  // The docs page is served, its assets from the API itself.
  const page = await fetch(`${p.apiUrl}/docs/static/index.html`);
  expect(page.status).toBe(200);
  expect(await page.text()).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);

  // Every route is an operation; every operation is a route.
  const routes = apiRoutes(p.api!).filter(
    (r) =>
      r.method !== 'HEAD' &&
      !r.url.startsWith('/docs') &&
      !r.url.startsWith('/console') &&
      r.url !== '/' &&
      r.url !== '/openapi.json',
  );
  const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
    ([path, ops]) => METHODS.filter((m) => ops[m]).map((m) => `${m} ${path}`),
  );
  expect(new Set(routes.map((r) => `${r.method.toLowerCase()} ${templateOf(r.url)}`))).toEqual(
    new Set(operations),
  );

  const c = new Checker(p, doc);
  const reader = (
    await c.send('POST', '/v1/keys', { body: { name: 'r', tenant: 'acme', scopes: ['jobs:read'] } })
  ).json.key as string;
  const slow = (
    await c.send('POST', '/v1/keys', {
      body: { name: 'slow', tenant: 'acme', scopes: ['jobs:read'], rate_per_sec: 1 },
    })
  ).json.key as string;
  const created = (await c.send('POST', '/v1/jobs', { body: job() })).json;
  const jobId = created.id as string;
  const live = (await c.send('POST', '/v1/jobs', { body: { ...job(), idempotency_key: 'k1' } })).json
    .id as string;
  await c.send('POST', '/v1/jobs', { body: { ...job(), idempotency_key: 'k1' } });
  const sched = (await c.send('POST', '/v1/schedules', { body: { ...schedule(), idempotency_key: 's1' } }))
    .json;
  await c.send('POST', '/v1/schedules', { body: { ...schedule(), idempotency_key: 's1' } });
  const sid = sched.id as string;
  const gone = (await c.send('POST', '/v1/schedules', { body: schedule() })).json.id as string;
  await c.send('DELETE', `/v1/schedules/${gone}`);
  const spareKey = (
    await c.send('POST', '/v1/keys', { body: { name: 'spare', tenant: 'acme', scopes: ['jobs:read'] } })
  ).json.id as string;

  // Successes of every route.
  await c.send('POST', '/v1/jobs:batch', { body: { jobs: [job(), job()] } });
  await c.send('GET', '/v1/jobs?tenant=acme&limit=1');
  await c.send('GET', '/v1/jobs:counts?tenant=acme');
  await c.send('GET', `/v1/jobs/${jobId}`);
  await c.send('GET', `/v1/jobs/${jobId}/attempts`);
  await c.send('POST', `/v1/jobs/${jobId}/reschedule`, { body: { delay_ms: 7_200_000 } });
  await c.send('DELETE', `/v1/jobs/${jobId}`);
  await c.send('GET', '/v1/dead-letters?tenant=acme');
  await c.send('POST', '/v1/schedules:preview?count=2', { body: schedule() });
  await c.send('GET', '/v1/schedules?tenant=acme');
  await c.send('GET', `/v1/schedules/${sid}`);
  await c.send('PUT', `/v1/schedules/${sid}`, { body: { ...schedule(), cron: '0 10 * * *' } });
  await c.send('PATCH', `/v1/schedules/${sid}`, { body: { jitter_ms: 1000 } });
  await c.send('PATCH', `/v1/schedules/${sid}`, {
    raw: '{"cron":"0 11 * * *"}',
    contentType: 'application/merge-patch+json',
  });
  await c.send('POST', `/v1/schedules/${sid}/pause`);
  await c.send('POST', `/v1/schedules/${sid}/resume`, { body: {} });
  await c.send('POST', `/v1/schedules/${sid}/trigger`, { body: { idempotency_key: 't1' } });
  await c.send('POST', `/v1/schedules/${sid}/trigger`, { body: { idempotency_key: 't1' } });
  const day = 86_400_000;
  const range = {
    from: new Date(Date.now() - 3 * day).toISOString(),
    to: new Date(Date.now() - day).toISOString(),
  };
  await c.send('POST', `/v1/schedules/${sid}/backfill`, { body: range });
  await c.send('POST', `/v1/schedules/${sid}/backfill`, { body: range });
  await c.send('GET', `/v1/schedules/${sid}/preview?count=3`);
  await c.send('GET', `/v1/schedules/${sid}/runs`);
  await c.send('GET', '/v1/keys');
  await c.send('DELETE', `/v1/keys/${spareKey}`);
  await c.send('DELETE', `/v1/keys/${spareKey}?cascade=true`);
  await c.send('GET', '/v1/whoami');
  await c.send('GET', '/v1/status');
  // Worker services: listed; a group in use is not retired (409), one no longer used is (200).
  const svc = `${ns.prefix}openapi-svc`;
  const w = p.worker({
    groupId: svc,
    service: 'openapi-svc',
    resourceClasses: ['io'],
    registryIntervalMs: 500,
  });
  await w.start();
  await c.send('GET', '/v1/workers');
  await c.send('DELETE', `/v1/workers/${encodeURIComponent(svc)}`);
  await w.stop();
  await c.send('DELETE', `/v1/workers/${encodeURIComponent(svc)}`);
  await c.send('DELETE', `/v1/workers/${encodeURIComponent(svc)}`);
  await c.send('GET', '/v1/overview?tenant=acme&minutes=5');
  // Dead letters: a dry run, a replay of none (it ends at once), a slow one cancelled, a re-run.
  const dead = (await c.send('POST', '/v1/jobs', { body: job() })).json.id as string;
  await p.pool.query(`UPDATE jobs SET state = 'FAILED', finished_at = now() WHERE id = $1`, [dead]);
  await c.send('POST', '/v1/dead-letters:replay', { body: { filter: { tenant: 'acme' } } });
  const none = { filter: { tenant: 'acme', type: 'nothing.here' }, dry_run: false };
  const replay = (await c.send('POST', '/v1/dead-letters:replay', { body: none })).json.id as string;
  await c.send('GET', '/v1/replays');
  await eventually(
    'the empty replay to end',
    async () => (await c.send('GET', `/v1/replays/${replay}`)).json.state === 'DONE',
  );
  const slowBody = { filter: { tenant: 'acme' }, dry_run: false, rate_per_sec: 1 };
  const slowReplay = (await c.send('POST', '/v1/dead-letters:replay', { body: slowBody })).json.id as string;
  await c.send('POST', `/v1/replays/${slowReplay}/cancel`);
  await c.send('POST', `/v1/jobs/${jobId}/rerun`);
  await c.send('GET', '/healthz', { key: null });
  expect((await c.send('GET', '/readyz', { key: null })).json).toMatchObject({ status: 'ready' });

  // Every route: no key (401) and a key without its scope (403); ids nobody has (404); bad input
  // (400); a body too large (413) or not JSON (415); state conflicts (409).
  const schedReader = (
    await c.send('POST', '/v1/keys', { body: { name: 's', tenant: 'acme', scopes: ['schedules:read'] } })
  ).json.key as string;
  const unknownJob = randomUUID();
  const unknownSched = randomUUID();
  const bodyRoutes: [string, string][] = [
    ['POST', '/v1/jobs'],
    ['POST', '/v1/jobs:batch'],
    ['POST', `/v1/jobs/${jobId}/reschedule`],
    ['POST', '/v1/schedules'],
    ['POST', '/v1/schedules:preview'],
    ['PUT', `/v1/schedules/${sid}`],
    ['PATCH', `/v1/schedules/${sid}`],
    ['POST', `/v1/schedules/${sid}/resume`],
    ['POST', `/v1/schedules/${sid}/trigger`],
    ['POST', `/v1/schedules/${sid}/backfill`],
    ['POST', '/v1/keys'],
    ['POST', '/v1/dead-letters:replay'],
  ];
  for (const t of operations) {
    const [method, template] = t.split(' ') as [string, string];
    if (template === '/healthz' || template === '/readyz') continue;
    const path = template.replace(
      '{id}',
      template.startsWith('/v1/keys') ? spareKey : template.includes('schedules') ? sid : jobId,
    );
    const m = method.toUpperCase();
    expect(
      (await c.send(m, path, { key: null, body: m === 'GET' || m === 'DELETE' ? undefined : {} })).status,
    ).toBe(401);
    if (template !== '/v1/whoami') {
      const wrong = template.startsWith('/v1/schedules') ? reader : schedReader;
      expect(
        (await c.send(m, path, { key: wrong, body: m === 'GET' || m === 'DELETE' ? undefined : {} })).status,
      ).toBe(403);
    }
  }
  // System routes: a tenant's admin key is refused as documented.
  const acmeAdmin = (
    await c.send('POST', '/v1/keys', { body: { name: 'a', tenant: 'acme', scopes: ['admin'] } })
  ).json.key as string;
  for (const path of ['/v1/status', '/v1/workers']) {
    expect((await c.send('GET', path, { key: acmeAdmin })).status).toBe(403);
  }
  for (const [m, path] of bodyRoutes) {
    expect(
      (await c.send(m, path, { raw: JSON.stringify({ pad: 'x'.repeat(9 * 1024 * 1024) }) })).status,
    ).toBe(413);
    expect((await c.send(m, path, { raw: '<job/>', contentType: 'application/xml' })).status).toBe(415);
    expect((await c.send(m, path, { body: { nonsense: true } })).status).toBe(400);
  }
  for (const [m, path] of [
    ['GET', '/v1/jobs?tenant=acme&state=NOPE'],
    ['GET', '/v1/jobs:counts'],
    ['GET', '/v1/overview?minutes=0'],
    ['GET', '/v1/dead-letters?state=FAILED&tenant=acme'],
    ['GET', '/v1/schedules?tenant=acme&limit=0'],
    ['GET', '/v1/jobs/not-a-uuid'],
    ['GET', '/v1/jobs/not-a-uuid/attempts'],
    ['DELETE', '/v1/jobs/not-a-uuid'],
    ['GET', '/v1/schedules/not-a-uuid'],
    ['DELETE', '/v1/schedules/not-a-uuid'],
    ['POST', '/v1/schedules/not-a-uuid/pause'],
    ['GET', `/v1/schedules/${sid}/preview?count=0`],
    ['GET', `/v1/schedules/${sid}/runs?limit=0`],
    ['POST', '/v1/jobs/not-a-uuid/rerun'],
    ['DELETE', `/v1/keys/${spareKey}?cascade=maybe`],
  ] as const) {
    expect((await c.send(m, path)).status).toBe(400);
  }
  for (const [m, path, body] of [
    ['GET', `/v1/jobs/${unknownJob}`],
    ['GET', `/v1/jobs/${unknownJob}/attempts`],
    ['DELETE', `/v1/jobs/${unknownJob}`],
    ['POST', `/v1/jobs/${unknownJob}/reschedule`, { delay_ms: 1000 }],
    ['GET', `/v1/schedules/${unknownSched}`],
    ['PUT', `/v1/schedules/${unknownSched}`, schedule()],
    ['PATCH', `/v1/schedules/${unknownSched}`, { jitter_ms: 1 }],
    ['DELETE', `/v1/schedules/${unknownSched}`],
    ['POST', `/v1/schedules/${unknownSched}/pause`],
    ['POST', `/v1/schedules/${unknownSched}/resume`, {}],
    ['POST', `/v1/schedules/${unknownSched}/trigger`, {}],
    ['POST', `/v1/schedules/${unknownSched}/backfill`, range],
    ['GET', `/v1/schedules/${unknownSched}/preview`],
    ['GET', `/v1/schedules/${unknownSched}/runs`],
    ['DELETE', '/v1/keys/k_000000000000'],
    ['GET', `/v1/replays/${unknownJob}`],
    ['POST', `/v1/replays/${unknownJob}/cancel`],
    ['POST', `/v1/jobs/${unknownJob}/rerun`],
  ] as const) {
    expect((await c.send(m, path, { body })).status).toBe(404);
  }
  for (const [m, path, body] of [
    ['DELETE', `/v1/jobs/${jobId}`],
    ['POST', `/v1/jobs/${jobId}/reschedule`, { delay_ms: 1000 }],
    ['PUT', `/v1/schedules/${gone}`, schedule()],
    ['PATCH', `/v1/schedules/${gone}`, { jitter_ms: 1 }],
    ['POST', `/v1/schedules/${gone}/pause`],
    ['POST', `/v1/schedules/${gone}/resume`, {}],
    ['POST', `/v1/schedules/${gone}/trigger`, {}],
    ['POST', `/v1/schedules/${gone}/backfill`, range],
    ['POST', `/v1/replays/${replay}/cancel`],
    ['POST', `/v1/jobs/${live}/rerun`],
  ] as const) {
    expect((await c.send(m, path, { body })).status, `${m} ${path}`).toBe(409);
  }
  // The rate limit: one request a second for this key.
  const limited = await Promise.all([1, 2, 3].map(() => c.send('GET', '/v1/whoami', { key: slow })));
  expect(limited.some((r) => r.status === 429)).toBe(true);

  // Refused before any route: headers over Node's limit are a 431, still problem+json.
  const big = await fetch(`${p.apiUrl}/v1/whoami`, { headers: { 'x-pad': 'x'.repeat(20_000) } });
  expect(big.status).toBe(431);
  expect(big.headers.get('content-type')).toBe('application/problem+json');
  expect(((await big.json()) as { code: string }).code).toBe('HEADERS_TOO_LARGE');

  // Every documented answer was seen, but 503 (dependency outages) and 429 beyond one route.
  const seen = new Set(c.sent.map((s) => `${s.method} ${s.template} ${s.status}`));
  const missing = Object.entries(doc.paths as Record<string, Record<string, { responses: object }>>).flatMap(
    ([path, ops]) =>
      METHODS.filter((m) => ops[m]).flatMap((m) =>
        Object.keys(ops[m]!.responses)
          .filter((s) => s !== '503' && s !== '429')
          .map((s) => `${m} ${path} ${s}`)
          .filter((k) => !seen.has(k)),
      ),
  );
  expect(missing).toEqual([]);
}, 180_000);
