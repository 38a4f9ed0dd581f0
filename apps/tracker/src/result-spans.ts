import { endHopSpan, HOP_SPANS, startHopSpan } from '@kairos/core';
import type { TaskResultRecord } from '@kairos/schemas';
import { SpanKind, type Span } from '@opentelemetry/api';

/** An attempt's outcome as it arrived, with the trace context its worker sent it in. */
export interface TracedOutcome {
  readonly result: TaskResultRecord;
  readonly traceparent: string | undefined;
}

/**
 * Starts the record span of each outcome (child of its worker's handler span) while its batch
 * is written; none when tracing is off. End them with endRecordSpans once the batch is durable.
 */
export function startRecordSpans(outcomes: readonly TracedOutcome[]): Span[] {
  const spans: Span[] = [];
  for (const { result: r, traceparent } of outcomes) {
    const span = startHopSpan(HOP_SPANS.record, traceparent, {
      kind: SpanKind.CONSUMER,
      attributes: {
        'kairos.job.id': r.job_id,
        'kairos.tenant': r.tenant_id,
        'kairos.attempt': r.attempt,
        'kairos.fence': r.fence,
        'kairos.outcome': r.outcome,
        'kairos.worker': r.worker_id,
      },
    });
    if (span) spans.push(span);
  }
  return spans;
}

export function endRecordSpans(spans: readonly Span[], err?: unknown): void {
  for (const span of spans) endHopSpan(span, err);
}
