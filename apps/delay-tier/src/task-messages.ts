import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import { endHopSpan, HOP_SPANS, startHopSpan, traceparentOfSpan } from '@kairos/core';
import { SCHEMAS } from '@kairos/schemas';
import { SpanKind } from '@opentelemetry/api';
import type { Message } from 'kafkajs';
import { taskDispatch, type HotRecord } from './record.js';

/** Builds task messages (the codec registers a class's task schema on its first message). */
export class TaskMessages {
  readonly #codec: AvroCodec;
  readonly #topics: TopicNames;

  constructor(codec: AvroCodec, topics: TopicNames) {
    this.#codec = codec;
    this.#topics = topics;
  }

  topic(record: HotRecord): string {
    return this.#topics.tasks(record.resource_class);
  }

  /**
   * The task message of a record popped at `nowMs` (Redis time). With tracing on, its dispatch
   * span (from the due-pop to the message, child of the job's trace context) becomes the task's
   * `traceparent`, the parent of the worker's handler span.
   */
  async build(record: HotRecord, epoch: number, nowMs: number): Promise<Message> {
    const topic = this.topic(record);
    const span = startHopSpan(HOP_SPANS.dispatch, record.traceparent, {
      kind: SpanKind.PRODUCER,
      startTime: nowMs,
      attributes: {
        'kairos.job.id': record.job_id,
        'kairos.tenant': record.tenant_id,
        'kairos.job.type': record.job_type,
        'kairos.resource_class': record.resource_class,
        'kairos.attempt': record.attempt,
        'kairos.fence': record.fence,
        'kairos.epoch': epoch,
        'kairos.partition': record.shard,
        // Never early: a due-pop happens at or after due_at; the lag is how late.
        'kairos.dispatch.lag_ms': Math.max(0, nowMs - record.due_at),
      },
    });
    const traceparent = span ? traceparentOfSpan(span) : record.traceparent;
    const headers: Record<string, string> = {
      [HEADERS.jobId]: record.job_id,
      [HEADERS.tenant]: record.tenant_id,
      [HEADERS.epoch]: String(epoch),
      [HEADERS.fence]: String(record.fence),
      [HEADERS.attempt]: String(record.attempt),
      [HEADERS.dueAt]: String(record.due_at),
    };
    if (traceparent) headers[HEADERS.traceparent] = traceparent;
    try {
      const value = await this.#codec.encode(topic, SCHEMAS.taskDispatch, taskDispatch(record, epoch, nowMs));
      endHopSpan(span);
      return { key: record.job_id, value, headers };
    } catch (err) {
      endHopSpan(span, err);
      throw err;
    }
  }

  /** Groups records by task topic, keeping their order. */
  byTopic(records: readonly HotRecord[]): Map<string, HotRecord[]> {
    const groups = new Map<string, HotRecord[]>();
    for (const r of records) {
      const topic = this.topic(r);
      const g = groups.get(topic) ?? [];
      groups.set(topic, g);
      g.push(r);
    }
    return groups;
  }
}
