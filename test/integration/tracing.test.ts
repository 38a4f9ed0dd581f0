import { findJob } from '@kairos/db';
import { traceIdOf } from '@kairos/core';
import { TransientError, type TaskContext } from '@kairos/worker-sdk';
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

// W3C trace context end to end on the real pipeline: a job keeps the trace it was created in (or
// one Kairos starts for it) through the outbox, the delay tier and every attempt, and the worker
// SDK's log lines about it carry it.

const CALLER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

interface Seen {
  readonly attempt: number;
  readonly traceparent: string | null;
}

/** Creates a job over HTTP (as a client does), with a trace context or without one. */
async function createOverHttp(p: Pipeline, traceparent: string | undefined): Promise<string> {
  const res = await fetch(`${p.apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${p.apiKey}`,
      ...(traceparent && { traceparent }),
    },
    body: JSON.stringify({
      tenant: 'acme',
      type: 'trace.flaky',
      resource_class: 'default',
      max_attempts: 3,
      retry: { base_ms: 0, cap_ms: 0, jitter_ms: 0 },
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

test('a job keeps its trace context through retries, on the handler context and on every SDK log line about it', async () => {
  const ns = await useNamespace('tracing');
  const p = await startPipeline(ns);
  // The SDK's log lines, as JSON, through a pino destination stream.
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const seen = new Map<string, Seen[]>();
  const worker = p.worker({ logger });
  worker.handle('trace.flaky', (_payload, ctx: TaskContext) => {
    seen.set(ctx.jobId, [
      ...(seen.get(ctx.jobId) ?? []),
      { attempt: ctx.attempt, traceparent: ctx.traceparent },
    ]);
    ctx.log.info({ step: 'handling' }, 'handler says hello');
    // The first attempt fails (transient): the job is retried, as a new dispatch.
    if (ctx.attempt === 1) throw new TransientError('not yet');
  });
  await worker.start();

  const traced = await createOverHttp(p, CALLER);
  const untraced = await createOverHttp(p, undefined);
  const malformed = await createOverHttp(p, '00-NOT-A-TRACEPARENT-01');
  await eventually('all three jobs to succeed on their second attempt', async () => {
    const jobs = await Promise.all([traced, untraced, malformed].map((id) => findJob(p.pool, id)));
    return jobs.every((j) => j?.state === 'SUCCEEDED' && j.attempt === 2);
  });

  // The caller's trace is kept as is; a job without one (or with a malformed one) gets its own.
  const stored = new Map<string, string>();
  for (const id of [traced, untraced, malformed]) {
    const tp = (await findJob(p.pool, id))?.traceparent;
    expect(tp, id).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    stored.set(id, tp!);
  }
  expect(stored.get(traced)).toBe(CALLER);
  // The job view shows it too.
  const view = await fetch(`${p.apiUrl}/v1/jobs/${traced}`, {
    headers: { authorization: `Bearer ${p.apiKey}` },
  });
  expect(((await view.json()) as { traceparent: string }).traceparent).toBe(CALLER);
  expect(new Set([...stored.values()].map(traceIdOf)).size).toBe(3);

  for (const [id, tp] of stored) {
    // Both attempts ran in the job's trace (no OpenTelemetry SDK here: the job's traceparent as is).
    expect(seen.get(id), id).toEqual([
      { attempt: 1, traceparent: tp },
      { attempt: 2, traceparent: tp },
    ]);
    // Every line about the job carries it: the handler's own, and the SDK's failed-attempt line.
    const about = lines.filter((l) => l.jobId === id);
    expect(about.map((l) => l.msg).sort()).toEqual([
      'handler failed',
      'handler says hello',
      'handler says hello',
    ]);
    for (const l of about) expect(l, id).toMatchObject({ traceparent: tp, jobId: id });
  }
  expect(lines.find((l) => l.msg === 'handler failed')).toMatchObject({
    attempt: 1,
    failureClass: 'transient',
    error: 'not yet',
  });
});

test('a job pre-loaded from PostgreSQL (beyond the lookahead when its event came) keeps its trace', async () => {
  const ns = await useNamespace('tracing-preload');
  const p = await startPipeline(ns, { delayTier: { lookaheadMs: 2000 } });
  const seen = new Map<string, string | null>();
  const worker = p.worker();
  worker.handle('trace.later', (_payload, ctx) => void seen.set(ctx.jobId, ctx.traceparent));
  await worker.start();
  // Its event leaves it in PostgreSQL; the pre-loader brings it into the hot set from its row.
  const [created] = await p.commands.createJobs(
    [{ tenant: 'acme', type: 'trace.later', resource_class: 'default', delay_ms: 4000 }],
    { traceparent: CALLER },
  );
  const id = created!.job.id;
  await eventually('the job to run', () => seen.has(id), 30_000);
  expect(seen.get(id)).toBe(CALLER);
  // Reported once the dispatch committed, which may come after the worker already ran it.
  await eventually('its dispatch to be reported', () => p.dispatched.some((d) => d.record.job_id === id));
  expect(p.dispatched.find((d) => d.record.job_id === id)?.record.traceparent).toBe(CALLER);
});
