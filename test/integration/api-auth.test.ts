import { createAdminServer } from '@kairos/delay-tier';
import { KeyVerifier } from '@kairos/http';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// Invariant 10: every endpoint needs an API key, the tenant comes from the key, and another
// tenant's job or schedule is a 404 (its existence never leaks); nothing refused changes anything.
// A tenant's admin key administers its tenant only: what acts on or shows the whole deployment
// (status, worker services, the delay tier's /admin/*) needs an admin key of every tenant.

/** The fields of the answers these tests read (a problem, a job, a schedule, a key, a list). */
interface Body {
  readonly id: string;
  readonly key: string;
  readonly tenant: string;
  readonly state: string;
  readonly code: string;
  readonly revoked_at: string | null;
  readonly errors: { field: string }[];
  readonly keys: { tenant: string }[];
  readonly schedules: unknown[];
}

interface Reply {
  status: number;
  type: string;
  headers: Headers;
  json: Body;
}

async function call(
  url: string,
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    headers: res.headers,
    json: (/json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : { text }) as Body,
  };
}

const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
const job = () => ({ type: 'email.send', resource_class: 'default', payload: {}, due_at: inAnHour() });
const schedule = () => ({
  cron: '0 9 * * *',
  time_zone: 'Europe/Paris',
  job: { type: 'report.daily', resource_class: 'default', payload: {} },
});

/** Makes a key through the API with the pipeline's any-tenant admin key. */
async function makeKey(p: Pipeline, spec: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const r = await call(p.apiUrl, p.apiKey, 'POST', '/v1/keys', spec);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { id: r.json.id, key: r.json.key };
}

/** Everything a refused request could have changed: jobs, schedules, keys, the request ledger. */
async function snapshot(p: Pipeline): Promise<string> {
  const q = async (sql: string) => JSON.stringify((await p.pool.query(sql)).rows);
  return [
    await q('SELECT id, state, version, due_at, tenant_id FROM jobs ORDER BY id'),
    await q('SELECT id, state, version, tenant_id FROM schedules ORDER BY id'),
    await q('SELECT id, revoked_at FROM api_keys ORDER BY id'),
    await q('SELECT count(*) FROM request_ledger'),
    await q('SELECT count(*) FROM replays'),
  ].join('\n');
}

interface Route {
  readonly method: string;
  readonly path: string;
  /** A body that would succeed for acme's admin. */
  readonly body?: unknown;
  /**
   * What another tenant's admin gets: 404 on an existing thing of acme's (its existence never
   * leaks), 403 for a create or list that names acme; undefined where it only sees its own.
   */
  readonly other?: { status: 403 | 404; body?: unknown };
  /** The body for a key of every tenant, which names the tenant (default: `other.body`, then `body`). */
  readonly anyTenant?: unknown;
  /** A system route: every tenant's admin key is refused (403), acme's own included. */
  readonly system?: boolean;
}

/** Every route of the API. */
function routes(ids: { job: string; schedule: string; key: string; replay: string }): Route[] {
  const backfill = {
    from: new Date(Date.now() - 3 * 86_400_000).toISOString(),
    to: new Date().toISOString(),
  };
  const notFound = { status: 404 } as const;
  const namesAcme = (body: unknown) => ({ status: 403, body }) as const;
  return [
    { method: 'POST', path: '/v1/jobs', body: job(), other: namesAcme({ ...job(), tenant: 'acme' }) },
    {
      method: 'POST',
      path: '/v1/jobs:batch',
      body: { jobs: [job()] },
      other: namesAcme({ jobs: [job(), { ...job(), tenant: 'acme' }] }),
      anyTenant: { jobs: [{ ...job(), tenant: 'acme' }] },
    },
    { method: 'GET', path: `/v1/jobs/${ids.job}`, other: notFound },
    { method: 'GET', path: `/v1/jobs/${ids.job}/attempts`, other: notFound },
    { method: 'GET', path: '/v1/jobs?tenant=acme', other: { status: 403 } },
    { method: 'GET', path: '/v1/jobs:counts?tenant=acme', other: { status: 403 } },
    { method: 'GET', path: '/v1/dead-letters?tenant=acme', other: { status: 403 } },
    {
      method: 'POST',
      path: '/v1/dead-letters:replay',
      body: { filter: {} },
      other: namesAcme({ filter: { tenant: 'acme' } }),
    },
    { method: 'GET', path: '/v1/replays' },
    { method: 'GET', path: `/v1/replays/${ids.replay}`, other: notFound },
    { method: 'POST', path: `/v1/replays/${ids.replay}/cancel`, other: notFound },
    { method: 'POST', path: `/v1/jobs/${ids.job}/rerun`, other: notFound },
    { method: 'DELETE', path: `/v1/jobs/${ids.job}`, other: notFound },
    {
      method: 'POST',
      path: `/v1/jobs/${ids.job}/reschedule`,
      body: { delay_ms: 7_200_000 },
      other: notFound,
    },
    {
      method: 'POST',
      path: '/v1/schedules',
      body: schedule(),
      other: namesAcme({ ...schedule(), tenant: 'acme' }),
    },
    {
      method: 'POST',
      path: '/v1/schedules:preview',
      body: schedule(),
      other: namesAcme({ ...schedule(), tenant: 'acme' }),
    },
    { method: 'GET', path: '/v1/schedules?tenant=acme', other: { status: 403 } },
    { method: 'GET', path: `/v1/schedules/${ids.schedule}`, other: notFound },
    {
      method: 'PUT',
      path: `/v1/schedules/${ids.schedule}`,
      body: { ...schedule(), cron: '0 10 * * *' },
      other: notFound,
      anyTenant: { ...schedule(), cron: '0 10 * * *', tenant: 'acme' },
    },
    { method: 'PATCH', path: `/v1/schedules/${ids.schedule}`, body: { cron: '0 11 * * *' }, other: notFound },
    { method: 'DELETE', path: `/v1/schedules/${ids.schedule}`, other: notFound },
    { method: 'POST', path: `/v1/schedules/${ids.schedule}/pause`, other: notFound },
    { method: 'POST', path: `/v1/schedules/${ids.schedule}/resume`, body: {}, other: notFound },
    { method: 'POST', path: `/v1/schedules/${ids.schedule}/trigger`, body: {}, other: notFound },
    { method: 'POST', path: `/v1/schedules/${ids.schedule}/backfill`, body: backfill, other: notFound },
    { method: 'GET', path: `/v1/schedules/${ids.schedule}/preview`, other: notFound },
    { method: 'GET', path: `/v1/schedules/${ids.schedule}/runs`, other: notFound },
    {
      method: 'POST',
      path: '/v1/keys',
      body: { name: 'x', scopes: ['jobs:read'] },
      other: namesAcme({ name: 'x', tenant: 'acme', scopes: ['jobs:read'] }),
    },
    { method: 'GET', path: '/v1/keys' },
    { method: 'DELETE', path: `/v1/keys/${ids.key}`, other: notFound },
    // The whole deployment: every consumer group and host; worker services serve every tenant.
    { method: 'GET', path: '/v1/status', system: true },
    { method: 'GET', path: '/v1/workers', system: true },
    { method: 'DELETE', path: '/v1/workers/none', system: true },
  ];
}

/** The keys of the matrix: acme's and globex's admins, narrower keys of acme, a reader of every tenant. */
interface MatrixKeys {
  readonly acmeAdmin: string;
  readonly globexAdmin: string;
  readonly jobsOnly: string;
  readonly schedulesOnly: string;
  readonly everyTenantReader: string;
}

type Case = [what: string, key: string | null, status: number, code: string];

/** Every way `r` must be refused, with the answer each gets. */
function refusals(r: Route, k: MatrixKeys, wrongSecret: string): Case[] {
  const cases: Case[] = [
    ['no key', null, 401, 'UNAUTHENTICATED'],
    ['a key with a wrong secret', wrongSecret, 401, 'UNAUTHENTICATED'],
    ['a made-up key', 'kairos_k_000000000000_' + 'A'.repeat(43), 401, 'UNAUTHENTICATED'],
    [
      'a key without the scope',
      r.path.startsWith('/v1/schedules') ? k.jobsOnly : k.schedulesOnly,
      403,
      'FORBIDDEN',
    ],
  ];
  if (r.system) {
    // The whole deployment: no tenant's admin, and no key of every tenant that is not admin.
    cases.push(['acme admin (a system route)', k.acmeAdmin, 403, 'FORBIDDEN']);
    cases.push(['globex admin (a system route)', k.globexAdmin, 403, 'FORBIDDEN']);
    cases.push(['a reader of every tenant (a system route)', k.everyTenantReader, 403, 'FORBIDDEN']);
  }
  if (r.other) {
    const code = r.other.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN';
    cases.push(['another tenant', k.globexAdmin, r.other.status, code]);
  }
  return cases;
}

/** Everything of one tenant a request could change. */
async function tenantSnapshot(p: Pipeline, tenant: string): Promise<string> {
  const q = async (sql: string) => JSON.stringify((await p.pool.query(sql, [tenant])).rows);
  return [
    await q('SELECT id, state, version, due_at FROM jobs WHERE tenant_id = $1 ORDER BY id'),
    await q('SELECT id, state, version FROM schedules WHERE tenant_id = $1 ORDER BY id'),
    await q('SELECT id, revoked_at FROM api_keys WHERE tenant_id = $1 ORDER BY id'),
    await q('SELECT id, state FROM replays WHERE tenant_id = $1 ORDER BY id'),
  ].join('\n');
}

/**
 * The same routes, allowed: acme's admin on every route of its tenant, the system admin on every
 * route. An allowed request answers 2xx, or 409 where an earlier one changed the state (a job
 * cancelled before its reschedule), or the route's own `allowed` answer; never 401, 403 or 404.
 */
async function allowedPass(p: Pipeline, all: Route[], acmeAdmin: string): Promise<number> {
  let checked = 0;
  const expectAllowed = async (who: string, key: string, r: Route, body: unknown) => {
    const res = await call(p.apiUrl, key, r.method, r.path, body);
    const label = `${r.method} ${r.path} by ${who}: ${res.status} ${JSON.stringify(res.json)}`;
    if (r.path === '/v1/workers/none') expect(res.status, label).toBe(404);
    else expect(res.status < 300 || res.status === 409, label).toBe(true);
    checked++;
  };
  for (const r of all.filter((x) => !x.system)) await expectAllowed('acme admin', acmeAdmin, r, r.body);
  for (const r of all)
    await expectAllowed('the system admin', p.apiKey, r, r.anyTenant ?? r.other?.body ?? r.body);
  return checked;
}

test('every route × (no key, a bad key, a key without the scope, another tenant, a tenant admin on a system route) is 401/403/404 and changes nothing', async () => {
  const ns = await useNamespace('api-auth');
  const p = await startPipeline(ns);
  const acmeAdmin = await makeKey(p, { name: 'acme-admin', tenant: 'acme', scopes: ['admin'] });
  const globexAdmin = await makeKey(p, { name: 'globex-admin', tenant: 'globex', scopes: ['admin'] });
  // Keys with a scope of another area than the route's.
  const jobsOnly = await makeKey(p, {
    name: 'acme-jobs',
    tenant: 'acme',
    scopes: ['jobs:read', 'jobs:write'],
  });
  const schedulesOnly = await makeKey(p, { name: 'acme-sched', tenant: 'acme', scopes: ['schedules:read'] });
  const everyTenantReader = await makeKey(p, { name: 'all-reader', tenant: '*', scopes: ['jobs:read'] });
  const acmeSpare = await makeKey(p, { name: 'acme-spare', tenant: 'acme', scopes: ['jobs:read'] });
  const created = await call(p.apiUrl, acmeAdmin.key, 'POST', '/v1/jobs', job());
  expect(created.status).toBe(201);
  // The tenant came from the key: the body named none.
  expect(created.json.tenant).toBe('acme');
  const sched = await call(p.apiUrl, acmeAdmin.key, 'POST', '/v1/schedules', schedule());
  expect(sched.status, JSON.stringify(sched.json)).toBe(201);
  expect(sched.json.tenant).toBe('acme');
  const replay = await call(p.apiUrl, acmeAdmin.key, 'POST', '/v1/dead-letters:replay', {
    filter: { type: 'nothing.here' },
    dry_run: false,
  });
  expect(replay.status).toBe(202);
  // Globex has things of its own, which nothing acme's admin does may touch.
  expect((await call(p.apiUrl, globexAdmin.key, 'POST', '/v1/jobs', job())).status).toBe(201);
  expect((await call(p.apiUrl, globexAdmin.key, 'POST', '/v1/schedules', schedule())).status).toBe(201);
  const ids = { job: created.json.id, schedule: sched.json.id, key: acmeSpare.id, replay: replay.json.id };
  const keys: MatrixKeys = {
    acmeAdmin: acmeAdmin.key,
    globexAdmin: globexAdmin.key,
    jobsOnly: jobsOnly.key,
    schedulesOnly: schedulesOnly.key,
    everyTenantReader: everyTenantReader.key,
  };

  const before = await snapshot(p);
  const wrongSecret = acmeAdmin.key.slice(0, -4) + (acmeAdmin.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  let checked = 0;
  for (const r of routes(ids)) {
    const label = `${r.method} ${r.path}`;
    for (const [what, key, status, code] of refusals(r, keys, wrongSecret)) {
      const body = what === 'another tenant' && r.other?.body !== undefined ? r.other.body : r.body;
      const res = await call(p.apiUrl, key, r.method, r.path, body);
      expect(res.status, `${label} with ${what}: ${JSON.stringify(res.json)}`).toBe(status);
      expect(res.type, `${label} with ${what}`).toMatch(/^application\/problem\+json/);
      expect(res.json.code, `${label} with ${what}`).toBe(code);
      checked++;
    }
  }
  expect(checked).toBeGreaterThan(100);
  // Another tenant's list shows none of acme's keys; acme's own admin sees only acme's.
  const globexKeys = await call(p.apiUrl, globexAdmin.key, 'GET', '/v1/keys');
  expect(globexKeys.json.keys.map((k) => k.tenant)).toEqual(['globex']);
  const acmeKeys = await call(p.apiUrl, acmeAdmin.key, 'GET', '/v1/keys');
  expect(new Set(acmeKeys.json.keys.map((k) => k.tenant))).toEqual(new Set(['acme']));
  expect(await snapshot(p)).toBe(before);

  // The same key does it all for its own tenant; a read-only key reads and writes nothing.
  const reader = await makeKey(p, {
    name: 'acme-reader',
    tenant: 'acme',
    scopes: ['jobs:read', 'schedules:read'],
  });
  expect((await call(p.apiUrl, reader.key, 'GET', `/v1/jobs/${ids.job}`)).status).toBe(200);
  expect((await call(p.apiUrl, reader.key, 'DELETE', `/v1/jobs/${ids.job}`)).status).toBe(403);
  expect((await call(p.apiUrl, reader.key, 'GET', '/v1/schedules')).json.schedules).toHaveLength(1);
  expect((await call(p.apiUrl, acmeAdmin.key, 'DELETE', `/v1/jobs/${ids.job}`)).json.state).toBe('CANCELLED');
  // Health stays open for probes.
  expect((await call(p.apiUrl, null, 'GET', '/healthz')).status).toBe(200);

  // Allowed: acme's admin on every route of its tenant, the system admin on every route; globex's
  // jobs, schedules, keys and replays stay as they were.
  const globexBefore = await tenantSnapshot(p, 'globex');
  expect(await allowedPass(p, routes(ids), acmeAdmin.key)).toBeGreaterThan(60);
  expect(await tenantSnapshot(p, 'globex')).toBe(globexBefore);
});

test('keys: shown once, stored hashed, scoped to their creator, revoked and expired keys refused', async () => {
  const ns = await useNamespace('api-keys');
  const p = await startPipeline(ns);
  const made = await call(p.apiUrl, p.apiKey, 'POST', '/v1/keys', {
    name: 'billing',
    tenant: 'acme',
    scopes: ['jobs:write', 'jobs:read', 'admin'],
  });
  expect(made.status).toBe(201);
  expect(made.json.key).toMatch(/^kairos_k_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  // The secret is nowhere in the database, and never shown again.
  const secret = made.json.key.split('_').slice(3).join('_');
  const stored = await p.pool.query<{ t: string }>('SELECT row_to_json(k)::text AS t FROM api_keys k');
  expect(stored.rows.map((r) => r.t).join()).not.toContain(secret);
  const listed = await call(p.apiUrl, p.apiKey, 'GET', '/v1/keys');
  expect(JSON.stringify(listed.json)).not.toContain(secret);
  expect((await call(p.apiUrl, made.json.key, 'GET', '/v1/whoami')).json).toMatchObject({
    key_id: made.json.id,
    tenant: 'acme',
  });

  // A tenant admin cannot mint keys beyond its tenant: another tenant or every tenant (403).
  for (const tenant of ['globex', '*']) {
    const r = await call(p.apiUrl, made.json.key, 'POST', '/v1/keys', {
      name: 'x',
      tenant,
      scopes: ['jobs:read'],
    });
    expect(r.status, JSON.stringify(r.json)).toBe(403);
  }
  for (const [body, field] of [
    [{ name: 'x', scopes: ['root'] }, 'scopes.0'],
    [{ name: 'x', scopes: ['jobs:read'], expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'x', scopes: ['jobs:read'], rate_per_sec: 0 }, 'rate_per_sec'],
    [{ scopes: ['jobs:read'] }, 'name'],
    [{ name: 'x', scopes: ['jobs:read'], owner: 'me' }, 'owner'],
  ] as const) {
    const r = await call(p.apiUrl, made.json.key, 'POST', '/v1/keys', body);
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(r.json.errors.map((e) => e.field)).toContain(field);
  }

  // Revoked: refused at once on this instance (its cache is dropped); the row stays for audit.
  const revoked = await call(p.apiUrl, p.apiKey, 'DELETE', `/v1/keys/${made.json.id}`);
  expect(revoked.status).toBe(200);
  expect(revoked.json.revoked_at).not.toBeNull();
  expect((await call(p.apiUrl, made.json.key, 'GET', '/v1/whoami')).status).toBe(401);
  expect((await call(p.apiUrl, p.apiKey, 'DELETE', '/v1/keys/k_ffffffffffff')).status).toBe(404);

  // Expired: a key past its expiry is refused even while cached.
  const soon = await call(p.apiUrl, p.apiKey, 'POST', '/v1/keys', {
    name: 'short',
    tenant: 'acme',
    scopes: ['jobs:read'],
    expires_at: new Date(Date.now() + 1500).toISOString(),
  });
  expect((await call(p.apiUrl, soon.json.key, 'GET', '/v1/whoami')).status).toBe(200);
  await p.pool.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    soon.json.id,
  ]);
  await new Promise((r) => setTimeout(r, 1600));
  expect((await call(p.apiUrl, soon.json.key, 'GET', '/v1/whoami')).status).toBe(401);
});

/** Whether a key still works. */
const works = async (p: Pipeline, key: string) =>
  (await call(p.apiUrl, key, 'GET', '/v1/whoami')).status === 200;

test('child keys: never beyond their creator (scopes, rate, expiry); bad ones named in one 400 and nothing made', async () => {
  const ns = await useNamespace('api-key-bounds');
  const p = await startPipeline(ns);
  const expiry = new Date(Date.now() + 86_400_000).toISOString();
  const parent = await makeKey(p, {
    name: 'acme-ops',
    tenant: 'acme',
    scopes: ['admin'],
    rate_per_sec: 50,
    expires_at: expiry,
  });
  // Left out, the expiry is the creator's and the rate too, as it is below the default: a child
  // never outlives or outruns it.
  const child = await call(p.apiUrl, parent.key, 'POST', '/v1/keys', { name: 'ci', scopes: ['jobs:read'] });
  expect(child.status, JSON.stringify(child.json)).toBe(201);
  expect(child.json).toMatchObject({ tenant: 'acme', rate_per_sec: 50, expires_at: expiry });
  expect((await call(p.apiUrl, child.json.key, 'GET', '/v1/whoami')).json).toMatchObject({
    expires_at: expiry,
  });
  const keyCount = async () =>
    Number((await p.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0]!.n);
  const keysBefore = await keyCount();
  const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
  for (const [body, fields] of [
    [{ name: 'x', scopes: ['jobs:read'], rate_per_sec: 51 }, ['rate_per_sec']],
    [{ name: 'x', scopes: ['jobs:read'], expires_at: later }, ['expires_at']],
    [
      { name: 'x', scopes: ['jobs:read'], rate_per_sec: 1_000_000, expires_at: later, x: 1 },
      ['expires_at', 'rate_per_sec', 'x'],
    ],
  ] as const) {
    const r = await call(p.apiUrl, parent.key, 'POST', '/v1/keys', body);
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(r.json.code).toBe('VALIDATION');
    expect(r.json.errors.map((e) => e.field).sort()).toEqual(fields);
  }
  // A key that is not admin makes no key; a child without admin cannot grant what it lacks.
  expect(
    (await call(p.apiUrl, child.json.key, 'POST', '/v1/keys', { name: 'y', scopes: ['jobs:read'] })).status,
  ).toBe(403);
  const narrowAdmin = await makeKey(p, { name: 'acme-narrow', tenant: 'acme', scopes: ['admin'] });
  const viaNarrow = await call(p.apiUrl, narrowAdmin.key, 'POST', '/v1/keys', {
    name: 'z',
    scopes: ['jobs:read'],
    rate_per_sec: 1001,
  });
  // A creator without a rate has the deployment default (1,000): no child above it.
  expect(viaNarrow.status).toBe(400);
  expect(viaNarrow.json.errors.map((e) => e.field)).toEqual(['rate_per_sec']);
  // Nothing refused made a key: the one more is acme-narrow.
  expect(await keyCount()).toBe(keysBefore + 1);
});

test('revoking with cascade=true revokes what the key made, transitively, and nothing else', async () => {
  const ns = await useNamespace('api-key-cascade');
  const p = await startPipeline(ns);
  const root = await makeKey(p, { name: 'acme-root', tenant: 'acme', scopes: ['admin'] });
  const make = async (by: string, name: string, scopes: string[]) => {
    const r = await call(p.apiUrl, by, 'POST', '/v1/keys', { name, scopes });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    return { id: r.json.id, key: r.json.key };
  };
  const child = await make(root.key, 'child', ['admin']);
  const sibling = await make(root.key, 'sibling', ['jobs:read']);
  const grandchild = await make(child.key, 'grandchild', ['jobs:read']);
  const bystander = await makeKey(p, { name: 'acme-other', tenant: 'acme', scopes: ['admin'] });
  const globexAdmin = await makeKey(p, { name: 'globex-admin', tenant: 'globex', scopes: ['admin'] });
  const globexChild = await make(globexAdmin.key, 'globex-child', ['jobs:read']);
  const before = await snapshot(p);

  // Another tenant's admin cannot reach the tree; a bad query is a 400 naming it: nothing revoked.
  expect((await call(p.apiUrl, globexAdmin.key, 'DELETE', `/v1/keys/${root.id}?cascade=true`)).status).toBe(
    404,
  );
  const bad = await call(p.apiUrl, bystander.key, 'DELETE', `/v1/keys/${root.id}?cascade=yes&all=1`);
  expect(bad.status).toBe(400);
  expect(bad.json.errors.map((e) => e.field).sort()).toEqual(['all', 'cascade']);
  expect(await snapshot(p)).toBe(before);

  // Without cascade, the key alone: what it made lives on.
  const one = await call(p.apiUrl, bystander.key, 'DELETE', `/v1/keys/${child.id}`);
  expect(one.json).toMatchObject({ id: child.id, cascaded: [] });
  expect(await works(p, child.key)).toBe(false);
  expect(await works(p, grandchild.key)).toBe(true);

  // With cascade, by acme's other admin: the root, its children and theirs (through the revoked child).
  const all = await call(p.apiUrl, bystander.key, 'DELETE', `/v1/keys/${root.id}?cascade=true`);
  expect(all.status, JSON.stringify(all.json)).toBe(200);
  expect([...(all.json as unknown as { cascaded: string[] }).cascaded].sort()).toEqual(
    [grandchild.id, sibling.id].sort(),
  );
  for (const k of [root, child, sibling, grandchild]) expect(await works(p, k.key)).toBe(false);
  for (const k of [bystander, globexAdmin, globexChild]) expect(await works(p, k.key)).toBe(true);
  // A key revoked elsewhere (another API instance: here, PostgreSQL directly) that this
  // instance still trusts from its cache makes no key: the creator is asked for in PostgreSQL.
  const elsewhere = await make(bystander.key, 'elsewhere', ['admin']);
  expect(await works(p, elsewhere.key)).toBe(true);
  await p.pool.query(`UPDATE api_keys SET revoked_at = now(), revoked_by = 'elsewhere' WHERE id = $1`, [
    elsewhere.id,
  ]);
  const count = async () => (await p.pool.query('SELECT count(*) FROM api_keys')).rows[0] as unknown;
  const keysBefore = await count();
  const late = await call(p.apiUrl, elsewhere.key, 'POST', '/v1/keys', {
    name: 'late',
    scopes: ['jobs:read'],
  });
  expect(late.status, JSON.stringify(late.json)).toBe(401);
  expect(await count()).toEqual(keysBefore);
  const revokedBy = await p.pool.query(
    `SELECT id, revoked_by FROM api_keys WHERE revoked_at IS NOT NULL AND revoked_by <> 'elsewhere' ORDER BY id`,
  );
  expect(revokedBy.rows).toEqual(
    [root, child, sibling, grandchild]
      .map((k) => ({ id: k.id, revoked_by: bystander.id }))
      .sort((x, y) => x.id.localeCompare(y.id)),
  );
});

test('a key over its rate gets 429 problem+json with Retry-After; other keys are not slowed', async () => {
  const ns = await useNamespace('api-rate');
  const p = await startPipeline(ns);
  const slow = await call(p.apiUrl, p.apiKey, 'POST', '/v1/keys', {
    name: 'slow',
    tenant: 'acme',
    scopes: ['jobs:read'],
    rate_per_sec: 5,
  });
  // 20 at once fall in at most two one-second windows: at most 10 pass.
  const replies = await Promise.all(
    Array.from({ length: 20 }, () => call(p.apiUrl, slow.json.key, 'GET', '/v1/whoami')),
  );
  const limited = replies.filter((r) => r.status === 429);
  expect(limited.length).toBeGreaterThanOrEqual(10);
  for (const r of limited) {
    expect(r.type).toMatch(/^application\/problem\+json/);
    expect(r.json.code).toBe('RATE_LIMITED');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(0);
  }
  expect((await call(p.apiUrl, p.apiKey, 'GET', '/v1/whoami')).status).toBe(200);
});

/** The delay tier's state an /admin/* request could change. */
async function tierState(p: Pipeline): Promise<string> {
  const admin = p.delayTier.admin();
  return JSON.stringify({ lookahead: admin.lookahead().configuredMs, limits: await admin.rateLimits() });
}

test('the delay tier admin endpoints need an admin key of every tenant, refuse values out of bounds; metrics and health stay open', async () => {
  const ns = await useNamespace('tier-admin-auth');
  const p = await startPipeline(ns);
  const admin = await createAdminServer({
    admin: p.delayTier.admin(),
    metrics: p.delayTier.metrics,
    keys: new KeyVerifier({ pool: p.pool }),
  });
  const url = await admin.listen({ host: '127.0.0.1', port: 0 });
  ns.defer(() => admin.close());
  // A tenant's admin (acme's, globex's), a narrower tenant key, and a key of every tenant that
  // is not admin: none of them acts on dispatch, which every tenant shares.
  const refused = [
    await makeKey(p, { name: 'acme-admin', tenant: 'acme', scopes: ['admin'] }),
    await makeKey(p, { name: 'globex-admin', tenant: 'globex', scopes: ['admin'] }),
    await makeKey(p, { name: 'acme-jobs', tenant: 'acme', scopes: ['jobs:write'] }),
    await makeKey(p, { name: 'all-reader', tenant: '*', scopes: ['jobs:read'] }),
  ];
  const routes: [string, string, unknown?][] = [
    ['GET', '/admin/status'],
    ['GET', '/admin/lookahead'],
    ['PUT', '/admin/lookahead', { lookahead_ms: 60_000 }],
    ['GET', '/admin/rate-limits'],
    ['PUT', '/admin/rate-limits/default', { rate_per_sec: 10, burst: 10 }],
    ['DELETE', '/admin/rate-limits/default'],
  ];
  const before = await tierState(p);
  for (const [method, path, body] of routes) {
    expect((await call(url, null, method, path, body)).status, `${method} ${path}`).toBe(401);
    for (const k of refused) {
      const res = await call(url, k.key, method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.json)}`).toBe(403);
      expect(res.json.code).toBe('FORBIDDEN');
    }
  }
  expect(await tierState(p)).toBe(before);

  // Values out of bounds: one 400 naming every bad field, nothing changed.
  for (const [path, body, fields] of [
    ['/admin/rate-limits/default', { rate_per_sec: 1e-9, burst: 0 }, ['burst', 'rate_per_sec']],
    ['/admin/rate-limits/default', { rate_per_sec: 1e9, burst: 1e9 }, ['burst', 'rate_per_sec']],
    [
      '/admin/rate-limits/default',
      { rate_per_sec: 'fast', burst: 1.5, x: 1 },
      ['burst', 'rate_per_sec', 'x'],
    ],
    ['/admin/rate-limits/NO%20CLASS', { rate_per_sec: 0, burst: 1 }, ['class', 'rate_per_sec']],
    ['/admin/lookahead', { lookahead_ms: 999 }, ['lookahead_ms']],
    ['/admin/lookahead', { lookahead_ms: 86_400_001 }, ['lookahead_ms']],
  ] as const) {
    const res = await call(url, p.apiKey, 'PUT', path, body);
    expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
    expect(res.json.errors.map((e) => e.field).sort()).toEqual(fields);
  }
  expect(await tierState(p)).toBe(before);

  // The system admin does each; the bounds themselves are accepted.
  for (const [method, path, body] of routes) {
    expect((await call(url, p.apiKey, method, path, body)).status, `${method} ${path}`).toBeLessThan(300);
  }
  expect(
    (await call(url, p.apiKey, 'PUT', '/admin/rate-limits/default', { rate_per_sec: 0.01, burst: 1 })).status,
  ).toBe(200);
  expect((await call(url, p.apiKey, 'DELETE', '/admin/rate-limits/default')).status).toBe(204);
  expect((await call(url, null, 'GET', '/healthz')).status).toBe(200);
  expect((await call(url, null, 'GET', '/metrics')).status).toBe(200);
});
