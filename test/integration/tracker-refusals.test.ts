import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { expect, test } from 'vitest';
import {
  cancelUnfinishedJob,
  claimForDispatch,
  ensureJobPartitions,
  expireJobs,
  failJobs,
  findJobs,
  inTransaction,
  insertJobs,
  lockJobs,
  migrate,
  recordResults,
  recordStarts,
  retryJobs,
  type ResultRecord,
  type StartRecord,
} from '@kairos/db';
import { useNamespace } from '../support/namespace.js';

// The tracker's report statements against real PostgreSQL: a start or result applies only to the
// attempt current in PostgreSQL (the job's fence, a live job, no outcome yet). Anything else, a
// terminal job above all, changes nothing, byte for byte, and is audited in refused_reports.

async function setup(label: string): Promise<pg.Pool> {
  const ns = await useNamespace(label);
  const pool = ns.pgPool(2);
  ns.defer(() => pool.end());
  await migrate(pool);
  await ensureJobPartitions(pool, new Date());
  return pool;
}

async function newJob(pool: pg.Pool): Promise<string> {
  const id = randomUUID();
  await insertJobs(pool, [
    {
      id,
      tenantId: 'acme',
      idempotencyKey: null,
      type: 'refusal.test',
      resourceClass: 'default',
      payload: '{}',
      dueAt: new Date(Date.now() - 1000),
      deadlineAt: null,
      maxAttempts: 3,
      routingKey: id,
      shard: 0,
      traceparent: null,
    },
  ]);
  return id;
}

async function dispatch(pool: pg.Pool, id: string): Promise<void> {
  const [job] = await findJobs(pool, [id]);
  const claim = [{ jobId: id, dueAt: job!.dueAt, version: job!.version }];
  expect(await inTransaction(pool, (tx) => claimForDispatch(tx, claim, new Date(), 1))).toEqual(
    new Set([id]),
  );
}

const start = (jobId: string, fence: number, workerId = 'w-late'): StartRecord => ({
  jobId,
  fence,
  attempt: Math.max(fence, 1),
  epoch: 1,
  workerId,
  startedAt: new Date(),
});

const result = (
  jobId: string,
  fence: number,
  outcome: 'SUCCEEDED' | 'FAILED',
  workerId = 'w-late',
): ResultRecord => ({
  jobId,
  dueAt: new Date(),
  fence,
  attempt: Math.max(fence, 1),
  epoch: 1,
  outcome,
  errorClass: outcome === 'FAILED' ? 'NO_HANDLER' : null,
  errorMessage: outcome === 'FAILED' ? 'no handler for refusal.test' : null,
  failureClass: outcome === 'FAILED' ? 'permanent' : null,
  retryAfterMs: null,
  workerId,
  startedAt: new Date(),
  finishedAt: new Date(),
});

/** One tracker batch: lock, starts, results, in one transaction (as Tracker#apply). */
function apply(pool: pg.Pool, starts: readonly StartRecord[], results: readonly ResultRecord[]) {
  return inTransaction(pool, async (tx) => {
    await lockJobs(
      tx,
      [...starts, ...results].map((r) => r.jobId),
    );
    const s = await recordStarts(tx, starts);
    return { startsRefused: s.refused, ...(await recordResults(tx, results)) };
  });
}

/** A failed current attempt, settled as the tracker would: retried (fence + 1) or failed for good. */
async function settle(pool: pg.Pool, id: string, fence: number, how: 'retry' | 'fail'): Promise<void> {
  const now = new Date();
  const settled = await inTransaction(pool, (tx) =>
    how === 'retry'
      ? retryJobs(tx, [{ jobId: id, fence, dueAt: now, lastError: 'boom', failureClass: 'transient' }])
      : failJobs(tx, [
          { jobId: id, fence, startedAt: now, finishedAt: now, lastError: 'boom', failureClass: 'permanent' },
        ]),
  );
  expect(settled).toHaveLength(1);
}

async function state(pool: pg.Pool, id: string): Promise<{ state: string; fence: number }> {
  const [job] = await findJobs(pool, [id]);
  return { state: job!.state, fence: job!.fence };
}

/** The job rows and every attempt row of `ids`, as PostgreSQL renders them. */
async function snapshot(pool: pg.Pool, ids: readonly string[]) {
  const jobs = await pool.query<{ j: string }>(
    'SELECT to_jsonb(j.*)::text AS j FROM jobs j WHERE id = ANY($1::uuid[]) ORDER BY id',
    [ids],
  );
  const attempts = await pool.query<{ a: string }>(
    'SELECT to_jsonb(a.*)::text AS a FROM attempts a WHERE job_id = ANY($1::uuid[]) ORDER BY job_id, fence',
    [ids],
  );
  return { jobs: jobs.rows.map((r) => r.j), attempts: attempts.rows.map((r) => r.a) };
}

async function refusedReports(pool: pg.Pool) {
  const r = await pool.query<{ job_id: string; fence: number; kind: string; reason: string; n: number }>(
    `SELECT job_id, fence::int, kind, reason, count(*)::int AS n FROM refused_reports
     GROUP BY job_id, fence, kind, reason ORDER BY job_id, fence, kind`,
  );
  return r.rows;
}

/** A job in each terminal state, reached through the real statements; fence and attempt rows vary. */
async function terminalJobs(pool: pg.Pool) {
  // SUCCEEDED at fence 2: attempt 1 failed and was retried.
  const succeeded = await newJob(pool);
  await dispatch(pool, succeeded);
  expect(
    (await apply(pool, [start(succeeded, 1, 'w1')], [result(succeeded, 1, 'FAILED', 'w1')])).failed,
  ).toHaveLength(1);
  await settle(pool, succeeded, 1, 'retry');
  await dispatch(pool, succeeded);
  expect(
    (await apply(pool, [start(succeeded, 2, 'w2')], [result(succeeded, 2, 'SUCCEEDED', 'w2')])).succeeded,
  ).toBe(1);
  // FAILED at fence 1.
  const failed = await newJob(pool);
  await dispatch(pool, failed);
  await apply(pool, [start(failed, 1, 'w1')], [result(failed, 1, 'FAILED', 'w1')]);
  await settle(pool, failed, 1, 'fail');
  // CANCELLED while RUNNING: its attempt row has a worker but no outcome.
  const cancelled = await newJob(pool);
  await dispatch(pool, cancelled);
  await apply(pool, [start(cancelled, 1, 'w1')], []);
  expect((await cancelUnfinishedJob(pool, cancelled))?.state).toBe('CANCELLED');
  // EXPIRED before dispatch: no attempt row at all.
  const expired = await newJob(pool);
  const [e] = await findJobs(pool, [expired]);
  expect(await expireJobs(pool, [{ jobId: expired, dueAt: e!.dueAt, deadlineAt: new Date() }])).toEqual([
    expired,
  ]);
  for (const [id, st] of [
    [succeeded, 'SUCCEEDED'],
    [failed, 'FAILED'],
    [cancelled, 'CANCELLED'],
    [expired, 'EXPIRED'],
  ] as const)
    expect((await state(pool, id)).state).toBe(st);
  return { succeeded, failed, cancelled, expired };
}

test('a terminal job never changes: starts and results at its fence, below, above or of no job are refused and audited', async () => {
  const pool = await setup('refusals-terminal');
  const jobs = await terminalJobs(pool);
  const ids = Object.values(jobs);
  const unknown = randomUUID();
  const fenceOf = new Map(
    await Promise.all(ids.map(async (id) => [id, (await state(pool, id)).fence] as const)),
  );
  const targets = ids.flatMap((id) => [-1, 0, 1].map((d) => ({ id, fence: fenceOf.get(id)! + d })));
  targets.push({ id: unknown, fence: 1 });
  const before = await snapshot(pool, [...ids, unknown]);

  // A worker re-reading old tasks (FAILED NO_HANDLER), a forged success, each replayed: never applied.
  for (const outcome of ['FAILED', 'SUCCEEDED'] as const) {
    const applied = await apply(
      pool,
      targets.map((t) => start(t.id, t.fence)),
      targets.map((t) => result(t.id, t.fence, outcome)),
    );
    expect(applied).toMatchObject({ succeeded: 0, failed: [] });
    expect(await snapshot(pool, [...ids, unknown])).toEqual(before);
  }

  // Every refusal audited twice (once per round), with its reason. A start or result of a
  // finished attempt: attempt_finished; of an unfinished or absent attempt of a terminal job:
  // job_terminal; above the job's fence: fence_ahead; of no job: job_unknown.
  const { succeeded: s, failed: f, cancelled: c, expired: x } = jobs;
  const reasons: [string, number, string][] = [
    [s, 1, 'attempt_finished'],
    [s, 2, 'attempt_finished'],
    [s, 3, 'fence_ahead'],
    [f, 0, 'job_terminal'],
    [f, 1, 'attempt_finished'],
    [f, 2, 'fence_ahead'],
    [c, 0, 'job_terminal'],
    [c, 1, 'job_terminal'],
    [c, 2, 'fence_ahead'],
    [x, 0, 'job_terminal'],
    [x, 1, 'job_terminal'],
    [x, 2, 'fence_ahead'],
    [unknown, 1, 'job_unknown'],
  ];
  const expected = reasons.flatMap(([job_id, fence, reason]) =>
    ['result', 'start'].map((kind) => ({ job_id, fence, kind, reason, n: 2 })),
  );
  const sort = (rows: typeof expected) =>
    [...rows].sort((a, b) =>
      `${a.job_id}/${a.fence}/${a.kind}`.localeCompare(`${b.job_id}/${b.fence}/${b.kind}`),
    );
  expect(sort(await refusedReports(pool))).toEqual(sort(expected));
  const audit = await pool.query<{ worker_id: string; outcome: string | null; kind: string }>(
    'SELECT DISTINCT worker_id, outcome, kind FROM refused_reports ORDER BY kind, outcome',
  );
  expect(audit.rows).toEqual([
    { worker_id: 'w-late', outcome: 'FAILED', kind: 'result' },
    { worker_id: 'w-late', outcome: 'SUCCEEDED', kind: 'result' },
    { worker_id: 'w-late', outcome: null, kind: 'start' },
  ]);
}, 60_000);

test('a live job still moves QUEUED → RUNNING → SUCCEEDED/FAILED, and a zombie result on it is recorded suppressed or refused, never applied', async () => {
  const pool = await setup('refusals-live');
  const ok = await newJob(pool);
  const bad = await newJob(pool);
  await dispatch(pool, ok);
  await dispatch(pool, bad);
  expect(await state(pool, ok)).toEqual({ state: 'QUEUED', fence: 1 });

  const started = await apply(pool, [start(ok, 1, 'w1'), start(bad, 1, 'w1')], []);
  expect(started.startsRefused).toEqual({});
  expect(await state(pool, ok)).toEqual({ state: 'RUNNING', fence: 1 });
  // A redelivered start of the running attempt is harmless: applied, nothing moves.
  expect((await apply(pool, [start(ok, 1, 'w1')], [])).startsRefused).toEqual({});

  const done = await apply(pool, [], [result(ok, 1, 'SUCCEEDED', 'w1'), result(bad, 1, 'FAILED', 'w1')]);
  expect(done).toMatchObject({ succeeded: 1, suppressed: 0, refused: {} });
  expect(done.failed.map((x) => [x.job.id, x.result.fence])).toEqual([[bad, 1]]);
  expect(await state(pool, ok)).toEqual({ state: 'SUCCEEDED', fence: 1 });
  const rows = await pool.query<{ job_id: string; outcome: string; worker_id: string; suppressed: boolean }>(
    'SELECT job_id, outcome, worker_id, suppressed FROM attempts WHERE job_id = ANY($1::uuid[]) ORDER BY outcome',
    [[ok, bad]],
  );
  expect(rows.rows).toEqual([
    { job_id: bad, outcome: 'FAILED', worker_id: 'w1', suppressed: false },
    { job_id: ok, outcome: 'SUCCEEDED', worker_id: 'w1', suppressed: false },
  ]);

  // `bad` is retried and dispatched again: fence 2, QUEUED. Its fence-1 worker was a zombie.
  await settle(pool, bad, 1, 'retry');
  await dispatch(pool, bad);
  expect(await state(pool, bad)).toEqual({ state: 'QUEUED', fence: 2 });
  // Its late result finds attempt 1 finished (as the reaper's LeaseExpired would have): refused,
  // counted as a suppressed zombie write, nothing changed.
  const before = await snapshot(pool, [bad]);
  const reaped = await apply(pool, [start(bad, 1, 'zombie')], [result(bad, 1, 'SUCCEEDED', 'zombie')]);
  expect(reaped).toMatchObject({ succeeded: 0, failed: [], suppressed: 1, refused: { attempt_finished: 1 } });
  expect(reaped.startsRefused).toEqual({ attempt_finished: 1 });
  expect(await snapshot(pool, [bad])).toEqual(before);

  // An attempt row without outcome (here: none at all) of a superseded attempt: the zombie's result
  // is recorded, suppressed, as before, and the job is untouched.
  await pool.query('DELETE FROM attempts WHERE job_id = $1 AND fence = 1', [bad]);
  const job = (await snapshot(pool, [bad])).jobs;
  const late = result(bad, 1, 'SUCCEEDED', 'zombie');
  const zombie = await apply(pool, [], [late]);
  expect(zombie).toMatchObject({ succeeded: 0, failed: [], suppressed: 1, refused: {} });
  expect((await snapshot(pool, [bad])).jobs).toEqual(job);
  const recorded = await pool.query<{ outcome: string; worker_id: string; suppressed: boolean }>(
    'SELECT outcome, worker_id, suppressed FROM attempts WHERE job_id = $1 AND fence = 1',
    [bad],
  );
  expect(recorded.rows).toEqual([{ outcome: 'SUCCEEDED', worker_id: 'zombie', suppressed: true }]);
  const recordedRows = await snapshot(pool, [bad]);
  // A redelivery of it is refused and not counted again; another late write is counted.
  expect(await apply(pool, [], [late])).toMatchObject({ suppressed: 0, refused: { attempt_finished: 1 } });
  expect(await apply(pool, [], [result(bad, 1, 'FAILED', 'zombie')])).toMatchObject({
    suppressed: 1,
    refused: { attempt_finished: 1 },
  });
  expect(await snapshot(pool, [bad])).toEqual(recordedRows);

  // The current attempt still runs to its end.
  await apply(pool, [start(bad, 2, 'w2')], []);
  expect(await state(pool, bad)).toEqual({ state: 'RUNNING', fence: 2 });
  expect((await apply(pool, [], [result(bad, 2, 'SUCCEEDED', 'w2')])).succeeded).toBe(1);
  expect(await state(pool, bad)).toEqual({ state: 'SUCCEEDED', fence: 2 });
}, 60_000);

test('refused_reports stays bounded: a statement that adds refusals prunes expired rows, twice as many at most', async () => {
  const pool = await setup('refusals-prune');
  await pool.query(
    `INSERT INTO refused_reports (job_id, fence, kind, reason, received_at)
     SELECT gen_random_uuid(), 1, 'start', 'job_unknown', now() - interval '8 days' - i * interval '1 minute'
     FROM generate_series(1, 5) i`,
  );
  await pool.query(
    `INSERT INTO refused_reports (job_id, fence, kind, reason, received_at)
     VALUES (gen_random_uuid(), 1, 'start', 'job_unknown', now() - interval '6 days')`,
  );
  const count = async () =>
    (
      await pool.query<{ old: number; all: number }>(
        `SELECT count(*) FILTER (WHERE received_at < now() - interval '7 days')::int AS old, count(*)::int AS all
       FROM refused_reports`,
      )
    ).rows[0];
  // No refusal: nothing pruned.
  const live = await newJob(pool);
  await dispatch(pool, live);
  expect((await apply(pool, [start(live, 1)], [])).startsRefused).toEqual({});
  expect(await count()).toEqual({ old: 5, all: 6 });
  await apply(pool, [start(randomUUID(), 1)], []);
  expect(await count()).toEqual({ old: 3, all: 5 });
  await apply(pool, [], [result(randomUUID(), 1, 'FAILED'), result(randomUUID(), 1, 'FAILED')]);
  expect(await count()).toEqual({ old: 0, all: 4 });
}, 60_000);

/** Another worker's report that it never started the attempt (its claim was GONE). */
const unstarted = (jobId: string, fence: number): ResultRecord => ({
  ...result(jobId, fence, 'FAILED', 'w-gone'),
  errorClass: 'AttemptUnknownToRedis',
  errorMessage: 'not started',
  failureClass: 'unstarted',
});

test('an unstarted report counts only for a QUEUED job, and never hides the attempt its own result', async () => {
  const pool = await setup('refusals-unstarted');
  const queued = await newJob(pool);
  const running = await newJob(pool);
  const both = await newJob(pool);
  for (const id of [queued, running, both]) await dispatch(pool, id);
  await apply(pool, [start(running, 1, 'w1'), start(both, 1, 'w1')], []);
  // In one batch: the running attempt's result, and another worker's unstarted report after it.
  const applied = await apply(
    pool,
    [],
    [unstarted(queued, 1), unstarted(running, 1), result(both, 1, 'SUCCEEDED', 'w1'), unstarted(both, 1)],
  );
  expect(applied.succeeded).toBe(1);
  expect(applied.refused).toEqual({ attempt_started: 1 });
  expect(applied.failed.map((f) => f.job.id)).toEqual([queued]);
  expect(await state(pool, both)).toEqual({ state: 'SUCCEEDED', fence: 1 });
  expect(await state(pool, running)).toEqual({ state: 'RUNNING', fence: 1 });
  // The running attempt's own result still applies afterwards.
  expect((await apply(pool, [], [result(running, 1, 'SUCCEEDED', 'w1')])).succeeded).toBe(1);
});
