import { createAdminServer } from '@kairos/delay-tier';
import { KeyVerifier } from '@kairos/http';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// Invariant 10: every endpoint needs an API key, the tenant comes from the key, and another
// tenant's job or schedule is a 404 (its existence never leaks); nothing refused changes anything.

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
    { method: 'GET', path: '/v1/status' },
    // Worker services serve every tenant: a tenant's admin key is refused.
    { method: 'GET', path: '/v1/workers', other: { status: 403 } },
    { method: 'DELETE', path: '/v1/workers/none', other: { status: 403 } },
  ];
}

test('every route × (no key, a bad key, a key without the scope, another tenant) is 401/403/404 and changes nothing', async () => {
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
  const ids = { job: created.json.id, schedule: sched.json.id, key: acmeSpare.id, replay: replay.json.id };

  const before = await snapshot(p);
  const wrongSecret = acmeAdmin.key.slice(0, -4) + (acmeAdmin.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  let checked = 0;
  for (const r of routes(ids)) {
    const label = `${r.method} ${r.path}`;
    const cases: [string, string | null, number, string][] = [
      ['no key', null, 401, 'UNAUTHENTICATED'],
      ['a key with a wrong secret', wrongSecret, 401, 'UNAUTHENTICATED'],
      ['a made-up key', 'kairos_k_000000000000_' + 'A'.repeat(43), 401, 'UNAUTHENTICATED'],
      [
        'a key without the scope',
        r.path.startsWith('/v1/schedules') ? jobsOnly.key : schedulesOnly.key,
        403,
        'FORBIDDEN',
      ],
    ];
    if (r.other) {
      const code = r.other.status === 404 ? 'NOT_FOUND' : 'FORBIDDEN';
      cases.push(['another tenant', globexAdmin.key, r.other.status, code]);
    }
    for (const [what, key, status, code] of cases) {
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

test('the delay tier admin endpoints need an admin key; metrics and health stay open', async () => {
  const ns = await useNamespace('tier-admin-auth');
  const p = await startPipeline(ns);
  const admin = await createAdminServer({
    admin: p.delayTier.admin(),
    metrics: p.delayTier.metrics,
    keys: new KeyVerifier({ pool: p.pool }),
  });
  const url = await admin.listen({ host: '127.0.0.1', port: 0 });
  ns.defer(() => admin.close());
  const tenantAdmin = await makeKey(p, { name: 'acme-admin', tenant: 'acme', scopes: ['jobs:write'] });
  const routes: [string, string, unknown?][] = [
    ['GET', '/admin/status'],
    ['GET', '/admin/lookahead'],
    ['PUT', '/admin/lookahead', { lookahead_ms: 60_000 }],
    ['GET', '/admin/rate-limits'],
    ['PUT', '/admin/rate-limits/default', { rate_per_sec: 10, burst: 10 }],
    ['DELETE', '/admin/rate-limits/default'],
  ];
  for (const [method, path, body] of routes) {
    expect((await call(url, null, method, path, body)).status, `${method} ${path}`).toBe(401);
    expect((await call(url, tenantAdmin.key, method, path, body)).status, `${method} ${path}`).toBe(403);
  }
  expect(p.delayTier.admin().lookahead().configuredMs).not.toBe(60_000);
  expect(await p.delayTier.admin().rateLimits()).toEqual({});
  expect((await call(url, p.apiKey, 'GET', '/admin/status')).status).toBe(200);
  expect((await call(url, null, 'GET', '/healthz')).status).toBe(200);
  expect((await call(url, null, 'GET', '/metrics')).status).toBe(200);
});
