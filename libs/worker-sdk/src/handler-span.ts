import { endHopSpan, HOP_SPANS, startHopSpan } from '@kairos/core';
import type { TaskDispatchRecord, TaskResultRecord } from '@kairos/schemas';
import { context, SpanKind, trace, type Span } from '@opentelemetry/api';

/**
 * The span around a handler, child of the task's trace context (the delay tier's dispatch span,
 * or the job's own). Undefined unless the service registered an OpenTelemetry SDK: the SDK works
 * without one (the API alone is a no-op).
 */
export function startHandlerSpan(d: TaskDispatchRecord, traceparent: string | null): Span | undefined {
  return startHopSpan(HOP_SPANS.handle, traceparent, {
    kind: SpanKind.CONSUMER,
    attributes: {
      'kairos.job.id': d.job_id,
      'kairos.tenant': d.tenant_id,
      'kairos.job.type': d.job_type,
      'kairos.resource_class': d.resource_class,
      'kairos.attempt': d.attempt,
      'kairos.fence': d.fence,
    },
  });
}

/** Runs the handler with its span active, so spans the handler starts are its children. */
export function inHandlerSpan<T>(span: Span | undefined, run: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), run) : run();
}

/** Ends the handler span with the attempt's failure, if any. */
export function endHandlerSpan(span: Span | undefined, error: TaskResultRecord['error']): void {
  if (!span) return;
  if (error === null) return endHopSpan(span);
  span.setAttributes({
    'kairos.error_class': error.error_class,
    'kairos.failure_class': error.failure_class,
  });
  endHopSpan(span, new Error(error.message));
}
