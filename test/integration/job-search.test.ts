import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

// GET /v1/jobs over 10,000 jobs of two tenants: every filter agrees with PostgreSQL, cursors walk
// each result once even while jobs are created between pages, and counts add up.

interface JobView {
  readonly id: string;
  readonly tenant: string;
  readonly type: string;
  readonly state: string;
  readonly resource_class: string;
  readonly created_at: string;
}

interface Page {
  readonly jobs: JobView[];
  readonly next_cursor: string | null;
}

const TOTAL = 10_000;
const TYPES = ['email.send', 'report.build', 'sms.send', 'cache.warm'];
const CLASSES = ['critical', 'default', 'io'];

async function get<T>(p: Pipeline, path: string, key = p.apiKey): Promise<{ status: number; json: T }> {
  const res = await fetch(`${p.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: (await res.json()) as T };
}

/** Every page of a search of acme's jobs; `between` runs after each page (to create jobs meanwhile). */
async function walk(p: Pipeline, query: string, between?: () => Promise<void>): Promise<JobView[]> {
  const all: JobView[] = [];
  let cursor: string | null = null;
  do {
    const r: { status: number; json: Page } = await get<Page>(
      p,
      `/v1/jobs?tenant=acme&${query}&limit=500${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    all.push(...r.json.jobs);
    cursor = r.json.next_cursor;
    await between?.();
  } while (cursor !== null);
  return all;
}

async function idsWhere(p: Pipeline, where: string, values: unknown[] = []): Promise<string[]> {
  const r = await p.pool.query<{ id: string }>(
    `SELECT id FROM jobs WHERE ${where} ORDER BY created_at DESC, id DESC`,
    values,
  );
  return r.rows.map((x) => x.id);
}

test(`search over ${TOTAL.toLocaleString('en')} jobs: every filter, stable cursors, counts`, async () => {
  const ns = await useNamespace('job-search');
  const p = await startPipeline(ns);
  const dueBase = Date.now() + 2 * 3600_000;
  for (let b = 0; b < TOTAL / 1000; b++) {
    const jobs = Array.from({ length: 1000 }, (_, i) => {
      const n = b * 1000 + i;
      return {
        tenant: n % 5 === 0 ? 'globex' : 'acme',
        type: TYPES[n % TYPES.length],
        resource_class: CLASSES[n % CLASSES.length],
        payload: { n },
        due_at: new Date(dueBase + n * 60_000).toISOString(),
      };
    });
    await p.commands.createJobs(jobs);
  }
  // Give them the histories search looks at (as the tracker would leave them).
  await p.pool.query(`UPDATE jobs SET state = 'SUCCEEDED', finished_at = created_at + interval '1 minute'
                      WHERE (payload->>'n')::int % 3 = 0`);
  await p.pool
    .query(`UPDATE jobs SET state = 'FAILED', finished_at = now(), last_error = 'Boom: 503 from upstream',
                      last_failure_class = CASE WHEN (payload->>'n')::int % 2 = 0 THEN 'transient' ELSE 'permanent' END
                      WHERE (payload->>'n')::int % 7 = 1`);

  const acme = (where: string) => `tenant_id = 'acme' AND ${where}`;
  const cases: [string, string][] = [
    ['', 'true'],
    ['state=FAILED', "state = 'FAILED'"],
    ['state=SUCCEEDED,FAILED', "state IN ('SUCCEEDED','FAILED')"],
    ['type=sms.send', "type = 'sms.send'"],
    ['resource_class=io,critical', "resource_class IN ('io','critical')"],
    ['failure_class=permanent', "last_failure_class = 'permanent'"],
    ['error=503%20FROM', "last_error ILIKE '%503 from%'"],
    [
      `due_after=${new Date(dueBase + 1000 * 60_000).toISOString()}&due_before=${new Date(dueBase + 3000 * 60_000).toISOString()}`,
      `due_at >= '${new Date(dueBase + 1000 * 60_000).toISOString()}' AND due_at < '${new Date(dueBase + 3000 * 60_000).toISOString()}'`,
    ],
    [
      'state=SUCCEEDED&type=email.send&resource_class=default',
      "state = 'SUCCEEDED' AND type = 'email.send' AND resource_class = 'default'",
    ],
  ];
  for (const [query, where] of cases) {
    const found = (await walk(p, query)).map((j) => j.id);
    expect(found, query).toEqual(await idsWhere(p, acme(where)));
  }
  // Finished and created ranges, from times the rows hold.
  const mid = await p.pool.query<{ t: Date }>(
    "SELECT finished_at AS t FROM jobs WHERE tenant_id = 'acme' AND finished_at IS NOT NULL ORDER BY finished_at LIMIT 1 OFFSET 500",
  );
  const t = mid.rows[0]!.t.toISOString();
  expect((await walk(p, `finished_after=${t}`)).map((j) => j.id)).toEqual(
    await idsWhere(p, acme('finished_at >= $1'), [t]),
  );
  expect((await walk(p, `created_before=${t}`)).map((j) => j.id)).toEqual(
    await idsWhere(p, acme('created_at < $1'), [t]),
  );

  // Jobs created while paging never shift a later page: each existing job is seen once.
  const before = await idsWhere(p, acme('true'));
  let extra = 0;
  const seen = await walk(p, 'type=email.send,sms.send,report.build,cache.warm', async () => {
    const r = await p.commands.createJobs(
      Array.from({ length: 25 }, () => ({
        tenant: 'acme',
        type: 'email.send',
        resource_class: 'io',
        delay_ms: 7200_000,
      })),
    );
    extra += r.length;
  });
  expect(seen.map((j) => j.id)).toEqual(before);
  expect(extra).toBeGreaterThan(0);

  // Counts by state and class add up to the tenant's jobs.
  const counts = await get<{
    total: number;
    counts: { state: string; resource_class: string; count: number }[];
  }>(p, '/v1/jobs:counts?tenant=acme');
  expect(counts.json.total).toBe(before.length + extra);
  const failed = counts.json.counts.filter((c) => c.state === 'FAILED').reduce((n, c) => n + c.count, 0);
  expect(failed).toBe((await idsWhere(p, acme("state = 'FAILED'"))).length);

  // Bad parameters are named; a tenant key sees only its tenant.
  const bad = await get<{ code: string; errors: { field: string }[] }>(
    p,
    '/v1/jobs?tenant=acme&state=DONE&limit=501&due_after=yesterday&cursor=nope&colour=red',
  );
  expect(bad.status).toBe(400);
  expect(bad.json.errors.map((e) => e.field).sort()).toEqual(['colour', 'due_after', 'limit', 'state.0']);
  const badCursor = await get<{ errors: { field: string }[] }>(p, '/v1/jobs?tenant=acme&cursor=nope');
  expect(badCursor.json.errors.map((e) => e.field)).toEqual(['cursor']);
  expect((await get(p, '/v1/jobs')).status).toBe(400);
  const key = await fetch(`${p.apiUrl}/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'globex-reader', tenant: 'globex', scopes: ['jobs:read'] }),
  });
  const globex = ((await key.json()) as { key: string }).key;
  const theirs = await get<Page>(p, '/v1/jobs?limit=500', globex);
  expect(theirs.json.jobs.length).toBe(500);
  expect(theirs.json.jobs.every((j) => j.tenant === 'globex')).toBe(true);
  expect((await get(p, '/v1/jobs?tenant=acme', globex)).status).toBe(403);
}, 180_000);
