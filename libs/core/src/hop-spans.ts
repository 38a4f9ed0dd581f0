import { parseTraceparent } from './trace-context.js';
import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanKind,
  type TimeInput,
} from '@opentelemetry/api';

/** A span of a hop (the OpenTelemetry API's), for code that only passes one along. */
export type HopSpan = Span;

/** Instrumentation scope of every Kairos span. */
export const KAIROS_TRACER = 'kairos';

/** The span names, one per hop of a job. */
export const HOP_SPANS = {
  create: 'kairos.job.create',
  dispatch: 'kairos.job.dispatch',
  handle: 'kairos.task.handle',
  record: 'kairos.result.record',
} as const;

/**
 * An OpenTelemetry context whose (remote) parent is the span a `traceparent` names; the root
 * context when it is absent or malformed, so the span starts a trace of its own.
 */
export function contextOf(traceparent: string | null | undefined): Context {
  const t = parseTraceparent(traceparent);
  if (!t) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: t.traceId,
    spanId: t.parentId,
    traceFlags: Number.parseInt(t.flags, 16),
    isRemote: true,
  });
}

/** A span's context as a `traceparent` header. */
export function traceparentOfSpan(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

export interface HopSpanOptions {
  readonly attributes?: Attributes;
  /** When the hop began (ms since the epoch, or a Date); default now. */
  readonly startTime?: TimeInput;
  readonly kind?: SpanKind;
}

// What a tracer provider delegates to until an OpenTelemetry SDK is registered (the API's no-op).
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether an OpenTelemetry SDK is registered (by the entry point, or by a worker service itself).
 * Without one, hops skip span work altogether: no context, no span object (tens of ns a hop).
 */
export function tracingRegistered(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider && provider.getDelegate() === NOOP_PROVIDER);
}

/**
 * A span of one hop, child of the job's `traceparent`; undefined when no OpenTelemetry SDK is
 * registered or its sampler drops the span, so callers skip the rest of the work.
 */
export function startHopSpan(
  name: string,
  traceparent: string | null | undefined,
  o: HopSpanOptions = {},
): Span | undefined {
  if (!tracingRegistered()) return undefined;
  const span = trace.getTracer(KAIROS_TRACER).startSpan(
    name,
    {
      ...(o.attributes && { attributes: o.attributes }),
      ...(o.startTime !== undefined && { startTime: o.startTime }),
      ...(o.kind !== undefined && { kind: o.kind }),
    },
    contextOf(traceparent),
  );
  return span.isRecording() ? span : undefined;
}

/** Ends a hop span with the error that ended the hop, if any. */
export function endHopSpan(span: Span | undefined, err?: unknown): void {
  if (!span) return;
  if (err !== undefined) {
    const error = err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'non-Error thrown');
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  }
  span.end();
}
