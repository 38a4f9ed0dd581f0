import { expect, test } from 'vitest';
import { shardOf } from '@kairos/core';
import { useNamespace } from '../support/namespace.js';
import { eventually, RESOURCE_CLASSES, startPipeline } from '../support/pipeline.js';
import { readAllDecoded } from '../support/topics.js';

const JOBS = Number(process.env.E2E_JOBS ?? 1000);
const SPREAD_MS = 20_000;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

test('1,000 one-time jobs over 20 s across three classes: all succeed once, none early, cancels hold', async () => {
  const ns = await useNamespace('e2e');
  const p = await startPipeline(ns);
  const runs = new Map<string, { startedAt: number; dueAt: number }[]>();
  const worker = p.worker();
  worker.handle('e2e.noop', (_payload, ctx) => {
    const list = runs.get(ctx.jobId) ?? [];
    list.push({ startedAt: Date.now(), dueAt: ctx.dueAt.getTime() });
    runs.set(ctx.jobId, list);
  });
  await worker.start();

  // Create through the HTTP API in batches, due 3–23 s from now across three resource classes.
  const base = Date.now() + 3000;
  const ids: string[] = [];
  for (let b = 0; b < Math.ceil(JOBS / 100); b++) {
    const jobs = Array.from({ length: Math.min(100, JOBS - b * 100) }, (_, i) => {
      const n = b * 100 + i;
      return {
        tenant: 'acme',
        type: 'e2e.noop',
        resource_class: RESOURCE_CLASSES[n % RESOURCE_CLASSES.length],
        payload: { n },
        due_at: new Date(base + Math.floor((n * SPREAD_MS) / JOBS)).toISOString(),
      };
    });
    const res = await fetch(`${p.apiUrl}/v1/jobs:batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}` },
      body: JSON.stringify({ jobs }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { jobs: { id: string; state: string; created: boolean }[] };
    for (const j of body.jobs) {
      expect(j).toMatchObject({ state: 'SCHEDULED', created: true });
      ids.push(j.id);
    }
  }

  // Cancel every 20th job among those due in the last half of the window (well before they are due).
  const cancelled = ids.filter((_, n) => n >= JOBS / 2 && n % 20 === 0);
  for (const id of cancelled) {
    const res = await fetch(`${p.apiUrl}/v1/jobs/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${p.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { state: string }).state).toBe('CANCELLED');
  }

  const expected = JOBS - cancelled.length;
  await eventually(
    'every job to reach a terminal state',
    async () => {
      const r = await p.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE state = 'SUCCEEDED'`,
      );
      return r.rows[0]?.n === expected;
    },
    90_000,
  );

  const rows = await p.pool.query<{ id: string; state: string; due_at: Date; dispatched_at: Date | null }>(
    'SELECT id, state, due_at, dispatched_at FROM jobs',
  );
  const state = new Map(rows.rows.map((r) => [r.id, r]));
  const cancelledSet = new Set(cancelled);
  for (const id of ids) {
    const row = state.get(id)!;
    if (cancelledSet.has(id)) {
      expect(row.state, `cancelled job ${id}`).toBe('CANCELLED');
      expect(runs.has(id), `cancelled job ${id} ran`).toBe(false);
    } else {
      expect(row.state, `job ${id}`).toBe('SUCCEEDED');
      const r = runs.get(id) ?? [];
      expect(r.length, `handler runs of job ${id}`).toBe(1);
      expect(r[0]!.startedAt, `job ${id} started before its due time`).toBeGreaterThanOrEqual(r[0]!.dueAt);
    }
  }
  // Dispatch lag (dispatched_at − due_at, both from Redis/PostgreSQL records), for the record.
  const lags = rows.rows
    .filter((r) => r.state === 'SUCCEEDED')
    .map((r) => r.dispatched_at!.getTime() - r.due_at.getTime())
    .sort((a, b) => a - b);
  expect(lags[0]).toBeGreaterThanOrEqual(0);
  console.log(
    `dispatch lag over ${lags.length} jobs: p50 ${quantile(lags, 0.5)} ms, p99 ${quantile(lags, 0.99)} ms, max ${lags.at(-1)} ms`,
  );

  // Every event came twice, from the outbox relay and from Debezium (which may still be behind);
  // the shard stored with each job is the partition Debezium's (Java) producer chose for it.
  let events: Awaited<ReturnType<typeof readAllDecoded>> = [];
  await eventually('every job event from Debezium too', async () => {
    events = await readAllDecoded(ns, p.topics.jobEvents);
    return events.filter((e) => !e.relayed).length >= JOBS + cancelled.length;
  });
  expect(events.filter((e) => !e.relayed).length).toBe(JOBS + cancelled.length);
  expect(events.filter((e) => e.relayed).length).toBe(JOBS + cancelled.length);
  for (const e of events) {
    const v = e.value as { shard: number; routing_key: string };
    expect(e.partition).toBe(v.shard);
    expect(shardOf(v.routing_key, ns.services.jobEventPartitions)).toBe(v.shard);
  }
  // Every message on every Kairos topic decodes through the registry with a generic decoder.
  for (const topic of [...RESOURCE_CLASSES.map((rc) => p.topics.tasks(rc)), p.topics.taskResults]) {
    const messages = await readAllDecoded(ns, topic);
    expect(messages.length, topic).toBeGreaterThan(0);
  }
});
