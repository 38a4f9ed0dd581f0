import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import type { RequestOutcome, SentRequest } from '@kairos/client';
import { parseTenantSources } from '@kairos/ingest';
import { useNamespace } from '../support/namespace.js';
import { startClient, startIngest } from '../support/ingest.js';
import { eventually, startPipeline } from '../support/pipeline.js';

/** Requests of the bulk round: 10,000 unless KAIROS_E2E_REQUESTS says otherwise (a smaller smoke run). */
const BULK = Number(process.env.KAIROS_E2E_REQUESTS ?? 10_000);

function accepted(o: RequestOutcome): Extract<RequestOutcome, { status: 'accepted' }> {
  if (o.status !== 'accepted') throw new Error(`rejected: ${o.reason}: ${o.message}`);
  return o;
}

const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

test(`${BULK} creates produced through libs/client become exactly ${BULK} jobs that run; the same again create none`, async () => {
  const ns = await useNamespace('schedule-requests-e2e');
  const p = await startPipeline(ns);
  const { ingest, fatal } = await startIngest(ns, { pipeline: p });
  const ran = new Map<string, number>();
  const worker = p.worker({ concurrency: 200 });
  worker.handle('bulk', (_payload, ctx) => void ran.set(ctx.jobId, (ran.get(ctx.jobId) ?? 0) + 1));
  await worker.start();
  const c = startClient(ns);
  await c.start();

  const t0 = Date.now();
  const job = (i: number) => ({
    type: 'bulk',
    resourceClass: 'default',
    payload: { i },
    delayMs: 3000,
    idempotencyKey: `bulk-${i}`,
  });
  const sent = await Promise.all(Array.from({ length: BULK }, (_, i) => c.schedule(job(i))));
  const producedS = seconds(t0);
  const outcomes = (await Promise.all(sent.map((s) => c.awaitOutcome(s)))).map(accepted);
  const appliedS = seconds(t0);
  expect(outcomes.every((o) => o.state === 'SCHEDULED' && !o.duplicate)).toBe(true);
  const jobIds = new Set(outcomes.map((o) => o.jobId));
  expect(jobIds.size).toBe(BULK);

  const succeeded = async () =>
    (
      await p.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE type = 'bulk' AND state = 'SUCCEEDED'`,
      )
    ).rows[0]!.n;
  await eventually(`${BULK} bulk jobs SUCCEEDED`, async () => (await succeeded()) === BULK, 600_000);
  const ranS = seconds(t0);
  expect([...jobIds].every((id) => ran.has(id))).toBe(true);
  expect(ran.size).toBe(BULK);

  // The same 10,000 again (new request ids, same idempotency keys): every one a duplicate of its job.
  const t1 = Date.now();
  const again = await Promise.all(Array.from({ length: BULK }, (_, i) => c.schedule(job(i))));
  const repeats = (await Promise.all(again.map((s) => c.awaitOutcome(s)))).map(accepted);
  const repeatS = seconds(t1);
  expect(repeats.every((o) => o.duplicate)).toBe(true);
  expect(repeats.map((o) => o.jobId)).toEqual(outcomes.map((o) => o.jobId));
  const total = await p.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE type = 'bulk'`);
  expect(total.rows[0]!.n).toBe(BULK);
  expect(ingest.stats()).toMatchObject({ accepted: BULK, duplicates: BULK, rejected: {} });
  expect(fatal).toEqual([]);
  console.log(
    `[schedule-requests] ${BULK} requests: produced in ${producedS} s, all applied (outcomes) at ${appliedS} s, ` +
      `all SUCCEEDED at ${ranS} s; the repeat answered (all duplicates) in ${repeatS} s`,
  );
}, 900_000);

test('cancels and reschedules through the topic take effect; repeats change nothing; bad ones are rejected', async () => {
  const ns = await useNamespace('schedule-requests-commands');
  const p = await startPipeline(ns);
  const { fatal } = await startIngest(ns, { pipeline: p });
  const runs: { jobId: string; at: number; dueAt: number }[] = [];
  const worker = p.worker();
  worker.handle(
    'cmd',
    (_payload, ctx) => void runs.push({ jobId: ctx.jobId, at: Date.now(), dueAt: ctx.dueAt.getTime() }),
  );
  await worker.start();
  const c = startClient(ns);
  await c.start();
  const outcome = async (sent: Promise<SentRequest>) => c.awaitOutcome(await sent);
  const create = async (key: string, extra: Record<string, unknown> = {}) =>
    accepted(
      await outcome(
        c.schedule({ type: 'cmd', resourceClass: 'io', delayMs: 3600_000, idempotencyKey: key, ...extra }),
      ),
    );
  const state = async (id: string) =>
    (await p.pool.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [id])).rows[0]?.state;

  const a = await create('a');
  const b = await create('b', { deadlineAt: new Date(Date.now() + 7200_000) });
  const other = accepted(
    await outcome(c.schedule({ tenant: 'globex', type: 'cmd', resourceClass: 'io', delayMs: 3600_000 })),
  );

  // Cancel a: CANCELLED at once; the same request key again changes nothing and says so.
  const cancelled = accepted(await outcome(c.cancel({ jobId: a.jobId, idempotencyKey: 'cancel-a' })));
  expect(cancelled).toMatchObject({ jobId: a.jobId, state: 'CANCELLED', duplicate: false, version: 2 });
  expect(await state(a.jobId)).toBe('CANCELLED');
  const repeat = accepted(await outcome(c.cancel({ jobId: a.jobId, idempotencyKey: 'cancel-a' })));
  expect(repeat).toMatchObject({ jobId: a.jobId, state: 'CANCELLED', duplicate: true, version: 2 });

  // Reschedule b to run in a second, clearing its deadline: it runs, not before its new due time.
  const moved = accepted(
    await outcome(
      c.reschedule({ jobId: b.jobId, delayMs: 1000, deadlineAt: null, idempotencyKey: 'move-b' }),
    ),
  );
  expect(moved).toMatchObject({ jobId: b.jobId, state: 'SCHEDULED', duplicate: false, version: 2 });
  await eventually('b ran', () => runs.some((r) => r.jobId === b.jobId), 60_000);
  const run = runs.find((r) => r.jobId === b.jobId)!;
  expect(run.dueAt).toBe(moved.dueAt.getTime());
  expect(run.at).toBeGreaterThanOrEqual(moved.dueAt.getTime());
  await eventually('b SUCCEEDED', async () => (await state(b.jobId)) === 'SUCCEEDED');
  const row = await p.pool.query<{ deadline_at: Date | null }>('SELECT deadline_at FROM jobs WHERE id = $1', [
    b.jobId,
  ]);
  expect(row.rows[0]?.deadline_at).toBeNull();
  // Delivered again after the job ran, the reschedule is still a duplicate, not a conflict.
  const late = accepted(
    await outcome(c.reschedule({ jobId: b.jobId, delayMs: 1000, idempotencyKey: 'move-b' })),
  );
  expect(late).toMatchObject({ duplicate: true, state: 'SUCCEEDED' });

  // What cannot be applied is rejected with a reason, and changes nothing.
  const rejected = async (sent: Promise<SentRequest>) => {
    const o = await outcome(sent);
    if (o.status !== 'rejected') throw new Error(`expected a rejection, got ${JSON.stringify(o)}`);
    return o;
  };
  expect((await rejected(c.cancel({ jobId: b.jobId }))).reason).toBe('JOB_STATE_CONFLICT');
  expect((await rejected(c.reschedule({ jobId: a.jobId, delayMs: 10 }))).reason).toBe('JOB_STATE_CONFLICT');
  expect((await rejected(c.cancel({ jobId: randomUUID() }))).reason).toBe('JOB_NOT_FOUND');
  // Another tenant's job does not exist for acme.
  expect((await rejected(c.cancel({ jobId: other.jobId }))).reason).toBe('JOB_NOT_FOUND');
  expect(await state(other.jobId)).toBe('SCHEDULED');
  const invalid = await rejected(c.cancel({ jobId: 'not-a-uuid' }));
  expect(invalid).toMatchObject({ reason: 'INVALID_FIELD', fields: [{ field: 'job_id' }] });
  const both = await rejected(
    c.reschedule({ jobId: other.jobId, tenant: 'globex', dueAt: Date.now(), delayMs: 5 }),
  );
  expect(both).toMatchObject({ reason: 'INVALID_FIELD', fields: [{ field: 'due_at' }] });
  const old = await rejected(
    c.schedule({ type: 'cmd', resourceClass: 'io', dueAt: Date.now() - 2 * 86_400_000 }),
  );
  expect(old).toMatchObject({ reason: 'DUE_TOO_FAR_IN_PAST', fields: [{ field: 'due_at' }] });
  expect(await state(other.jobId)).toBe('SCHEDULED');
  expect(fatal).toEqual([]);
});

test('a sender named by a header may send requests only for its own tenants; the rest are rejected UNKNOWN_TENANT and create nothing', async () => {
  const ns = await useNamespace('schedule-requests-sources');
  const { fatal, pool } = await startIngest(ns, {
    ingest: {
      tenantSources: parseTenantSources('header:kairos-source', 'billing=acme|acme-eu;payments=globex'),
    },
  });
  const c = startClient(ns);
  await c.start();
  const send = async (tenant: string, source?: string) =>
    c.awaitOutcome(
      await c.schedule({
        tenant,
        type: 'src',
        resourceClass: 'io',
        delayMs: 3600_000,
        ...(source === undefined ? {} : { headers: { 'kairos-source': source } }),
      }),
    );
  const ok = accepted(await send('acme-eu', 'billing'));
  const refused = [await send('globex', 'billing'), await send('acme', 'intruder'), await send('acme')];
  for (const r of refused) {
    expect(r).toMatchObject({ status: 'rejected', reason: 'UNKNOWN_TENANT' });
  }
  const rows = await pool.query<{ id: string }>('SELECT id FROM jobs');
  expect(rows.rows.map((r) => r.id)).toEqual([ok.jobId]);
  expect(fatal).toEqual([]);
});
