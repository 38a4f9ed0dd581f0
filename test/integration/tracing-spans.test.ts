import { findJob } from '@kairos/db';
import { HOP_SPANS } from '@kairos/core';
import { TransientError } from '@kairos/worker-sdk';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

// With an OpenTelemetry SDK registered (here in memory, in this process, where the whole pipeline
// runs), one job's hops form one trace: create → dispatch → handle → record, per attempt.

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

test('the spans of one job form one trace, each hop the child of the one before, per attempt', async () => {
  const ns = await useNamespace('tracing-spans');
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
  ns.defer(async () => {
    await provider.shutdown();
    trace.disable();
  });
  const p = await startPipeline(ns);
  const worker = p.worker();
  worker.handle('trace.spans', (_payload, ctx) => {
    if (ctx.attempt === 1) throw new TransientError('first attempt fails');
  });
  await worker.start();

  const res = await fetch(`${p.apiUrl}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${p.apiKey}`, traceparent: CALLER },
    body: JSON.stringify({
      tenant: 'acme',
      type: 'trace.spans',
      resource_class: 'default',
      retry: { base_ms: 0, cap_ms: 0, jitter_ms: 0 },
    }),
  });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { id: string }).id;
  const ofJob = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID);
  await eventually('the job to succeed on its second attempt', async () => {
    const job = await findJob(p.pool, id);
    return job?.state === 'SUCCEEDED' && job.attempt === 2;
  });
  await eventually(
    'both attempts’ results to be recorded',
    () => ofJob().filter((s) => s.name === HOP_SPANS.record).length === 2,
  );

  const spans = ofJob();
  const named = (name: string) => spans.filter((s) => s.name === name);
  const [create] = named(HOP_SPANS.create);
  expect(named(HOP_SPANS.create)).toHaveLength(1);
  // The job is created as a child of the caller's span; it keeps the create span as its context.
  expect(parentOf(create!)).toBe(CALLER_SPAN);
  expect(create!.attributes['kairos.job.id']).toBe(id);
  expect((await findJob(p.pool, id))?.traceparent).toBe(`00-${TRACE_ID}-${idOf(create!)}-01`);

  const dispatches = named(HOP_SPANS.dispatch);
  const handles = named(HOP_SPANS.handle);
  const records = named(HOP_SPANS.record);
  expect([dispatches.length, handles.length, records.length]).toEqual([2, 2, 2]);
  for (const attempt of [1, 2]) {
    const dispatch = dispatches.find((s) => s.attributes['kairos.attempt'] === attempt)!;
    const handle = handles.find((s) => s.attributes['kairos.attempt'] === attempt)!;
    const record = records.find((s) => s.attributes['kairos.attempt'] === attempt)!;
    // Every attempt is dispatched in the job's trace, under its create span.
    expect(parentOf(dispatch)).toBe(idOf(create!));
    expect(dispatch.attributes['kairos.dispatch.lag_ms']).toBeGreaterThanOrEqual(0);
    expect(parentOf(handle)).toBe(idOf(dispatch));
    expect(parentOf(record)).toBe(idOf(handle));
    expect(record.attributes['kairos.outcome']).toBe(attempt === 1 ? 'FAILED' : 'SUCCEEDED');
    expect(handle.status.code).toBe(attempt === 1 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET);
  }
  // Nothing else of this job's trace: one create, and three hops per attempt.
  expect(spans).toHaveLength(7);
});
