import type { ProcessDeployment } from '@kairos/ops';
import { expect, test } from 'vitest';
import { createJobsOverHttp, startDeployment } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

// Replay of dead letters through the API as users run it (every app its own process): a dry
// run changes nothing; 1,000 dead letters at 100/s take at least 10 s; a replay whose API is
// SIGKILLed half-way is resumed by the next API and replays each job exactly once; the audit
// trail says who did what; a re-run makes a new job of a finished one.

interface ReplayView {
  id: string;
  state: string;
  selected: number;
  replayed: number;
  created_at: string;
  finished_at: string | null;
  audit?: { action: string; actor: string; detail: Record<string, unknown> }[];
}

async function call<T>(
  d: ProcessDeployment,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${d.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${d.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as T };
}

/** n jobs of a type, made dead letters (FAILED, permanent) as the tracker leaves them. */
async function deadLetters(d: ProcessDeployment, type: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1000) {
    const jobs = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
      tenant: 'acme',
      type,
      resource_class: 'io',
      payload: { n: i + k },
      delay_ms: 3600_000,
      max_attempts: 4,
    }));
    ids.push(...(await createJobsOverHttp(d, jobs)).map((j) => j.id));
  }
  await d.pool.query(
    `UPDATE jobs SET state = 'FAILED', finished_at = now(), last_error = 'no such recipient', last_failure_class = 'permanent'
     WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return ids;
}

/** Jobs that replay each original: a count per original (each must be exactly 1). */
async function copiesOf(d: ProcessDeployment, originals: string[]): Promise<Map<string, number>> {
  const r = await d.pool.query<{ replay_of: string; n: string; attempts: string }>(
    `SELECT replay_of, count(*) AS n FROM jobs WHERE replay_of = ANY($1::uuid[]) GROUP BY replay_of`,
    [originals],
  );
  return new Map(r.rows.map((x) => [x.replay_of, Number(x.n)]));
}

async function snapshot(d: ProcessDeployment): Promise<string> {
  const q = async (sql: string) => JSON.stringify((await d.pool.query(sql)).rows);
  return [
    await q('SELECT id, state, version FROM jobs ORDER BY id'),
    await q('SELECT count(*) FROM replays'),
    await q('SELECT count(*) FROM replay_audit'),
  ].join('\n');
}

test('replay of dead letters: dry run, rate, a SIGKILL half-way resumed exactly once, audit, re-run', async () => {
  const ns = await useNamespace('replay');
  const d = await startDeployment(ns, { apps: ['api'], env: { KAIROS_REPLAY_STALE_MS: '2000' } });
  const first = await deadLetters(d, 'replay.first', 1000);
  const second = await deadLetters(d, 'replay.second', 1000);
  // Not dead letters, or not selected: never replayed.
  await createJobsOverHttp(d, [
    { tenant: 'acme', type: 'replay.first', resource_class: 'io', delay_ms: 3600_000 },
  ]);

  // The dry run: counts and a sample, nothing changed.
  const before = await snapshot(d);
  const dry = await call<{ total: number; groups: { type: string; count: number }[]; sample: string[] }>(
    d,
    'POST',
    '/v1/dead-letters:replay',
    { filter: { tenant: 'acme', type: 'replay.first' } },
  );
  expect(dry.status).toBe(200);
  expect(dry.json.total).toBe(1000);
  expect(dry.json.groups).toEqual([
    { type: 'replay.first', resource_class: 'io', tenant: 'acme', count: 1000 },
  ]);
  expect(dry.json.sample).toHaveLength(5);
  expect(dry.json.sample.every((id) => first.includes(id))).toBe(true);
  expect(await snapshot(d)).toBe(before);

  // 1,000 at 100/s, undisturbed: at least 10 s, each once.
  const run = await call<ReplayView>(d, 'POST', '/v1/dead-letters:replay', {
    filter: { tenant: 'acme', type: 'replay.first' },
    dry_run: false,
    rate_per_sec: 100,
  });
  expect(run.status).toBe(202);
  expect(run.json).toMatchObject({ state: 'RUNNING', selected: 1000 });
  let done: ReplayView | undefined;
  await eventually(
    'the first replay to finish',
    async () => {
      done = (await call<ReplayView>(d, 'GET', `/v1/replays/${run.json.id}`)).json;
      return done.state === 'DONE';
    },
    60_000,
  );
  const tookMs = Date.parse(done!.finished_at!) - Date.parse(done!.created_at);
  console.log(`[replay] 1,000 dead letters at 100/s: ${(tookMs / 1000).toFixed(2)} s`);
  expect(tookMs).toBeGreaterThanOrEqual(9900);
  const copies = await copiesOf(d, first);
  expect(copies.size).toBe(1000);
  expect([...copies.values()].every((n) => n === 1)).toBe(true);
  // Fresh jobs: a new attempt budget, the original's policy, due now.
  const fresh = await d.pool.query<{ attempt: number; fence: string; max_attempts: number; state: string }>(
    'SELECT DISTINCT attempt, fence, max_attempts, state FROM jobs WHERE replay_of = ANY($1::uuid[])',
    [first],
  );
  expect(fresh.rows.every((r) => r.attempt === 1 && Number(r.fence) === 1 && r.max_attempts === 4)).toBe(
    true,
  );
  expect(done!.audit!.map((a) => a.action)).toEqual(['created', 'done']);
  expect(done!.audit![0]).toMatchObject({ actor: expect.stringMatching(/^k_/), detail: { selected: 1000 } });

  // The second replay: its API is SIGKILLed half-way; the next API takes it over and finishes it.
  const second1 = await call<ReplayView>(d, 'POST', '/v1/dead-letters:replay', {
    filter: { tenant: 'acme', type: 'replay.second' },
    dry_run: false,
    rate_per_sec: 200,
  });
  await eventually('half of it sent', async () => {
    const r = await d.pool.query<{ replayed: number }>('SELECT replayed FROM replays WHERE id = $1', [
      second1.json.id,
    ]);
    return (r.rows[0]?.replayed ?? 0) >= 400;
  });
  const [api] = d.apps('api');
  await d.kill(api!, 'SIGKILL');
  const killedAt = await d.pool.query<{ replayed: number }>('SELECT replayed FROM replays WHERE id = $1', [
    second1.json.id,
  ]);
  expect(killedAt.rows[0]!.replayed).toBeLessThan(1000);
  await d.startApp('api');
  let resumed: ReplayView | undefined;
  await eventually(
    'the second replay to be resumed and finish',
    async () => {
      resumed = (await call<ReplayView>(d, 'GET', `/v1/replays/${second1.json.id}`)).json;
      return resumed.state === 'DONE';
    },
    60_000,
  );
  const again = await copiesOf(d, second);
  expect(again.size).toBe(1000);
  expect([...again.values()].filter((n) => n !== 1)).toEqual([]);
  expect(resumed!.replayed).toBe(1000);
  expect(resumed!.audit!.map((a) => a.action)).toEqual(['created', 'resumed', 'done']);
  // The audit is append-only.
  await expect(d.pool.query('DELETE FROM replay_audit')).rejects.toThrow(/append-only/);

  // Cancel: a slow replay stops where it is.
  const slow = await call<ReplayView>(d, 'POST', '/v1/dead-letters:replay', {
    filter: { tenant: 'acme', type: 'replay.second' },
    dry_run: false,
    rate_per_sec: 1,
  });
  const cancelled = await call<ReplayView>(d, 'POST', `/v1/replays/${slow.json.id}/cancel`);
  expect(cancelled.json.state).toBe('CANCELLED');
  expect((await call(d, 'POST', `/v1/replays/${slow.json.id}/cancel`)).status).toBe(409);
  const audit = (await call<ReplayView>(d, 'GET', `/v1/replays/${slow.json.id}`)).json.audit!;
  expect(audit.map((a) => a.action)).toEqual(['created', 'cancelled']);

  // Re-run: a finished job runs again as a new job; a waiting one is a conflict.
  const rerun = await call<{ id: string; replay_of: string; state: string }>(
    d,
    'POST',
    `/v1/jobs/${first[0]}/rerun`,
  );
  expect(rerun.status).toBe(201);
  expect(rerun.json).toMatchObject({ replay_of: first[0], state: 'SCHEDULED' });
  expect((await call(d, 'POST', `/v1/jobs/${rerun.json.id}/rerun`)).status).toBe(409);
}, 240_000);
