import { afterEach, describe, expect, test } from 'vitest';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { endHopSpan, startHopSpan, traceparentOfSpan, tracingRegistered } from '@kairos/core';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

afterEach(() => trace.disable());

describe('hop spans', () => {
  test('without an OpenTelemetry SDK: off, and no span at all', () => {
    expect(tracingRegistered()).toBe(false);
    expect(startHopSpan('kairos.test', PARENT)).toBeUndefined();
    expect(startHopSpan('kairos.test', null)).toBeUndefined();
    endHopSpan(undefined, new Error('nothing to end'));
  });

  test('with one: a child of the traceparent, or a new trace for none or a malformed one', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    trace.setGlobalTracerProvider(provider);
    expect(tracingRegistered()).toBe(true);

    const child = startHopSpan('kairos.child', PARENT, {
      attributes: { 'kairos.job.id': 'j' },
      startTime: 1000,
    })!;
    expect(traceparentOfSpan(child)).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    endHopSpan(child, new Error('boom'));
    const root = startHopSpan('kairos.root', 'garbage')!;
    endHopSpan(root);

    const [c, r] = exporter.getFinishedSpans();
    expect(c?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(c?.attributes['kairos.job.id']).toBe('j');
    expect(c?.startTime).toEqual([1, 0]);
    expect(c?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(r?.parentSpanContext).toBeUndefined();
    expect(r?.spanContext().traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    await provider.shutdown();
  });
});
