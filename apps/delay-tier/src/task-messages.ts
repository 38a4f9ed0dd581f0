import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import { endHopSpan, HOP_SPANS, startHopSpan, traceparentOfSpan, type RoutingTable } from '@kairos/core';
import { SCHEMAS } from '@kairos/schemas';
import { SpanKind } from '@opentelemetry/api';
import type { Message } from 'kafkajs';
import { taskDispatch, type HotRecord } from './record.js';

/** The routing of the moment (kairos.workers); undefined: every task to its class topic. */
export type Routes = () => RoutingTable | undefined;

/**
 * Builds task messages (the codec registers a topic's task schema on its first message) and
 * routes each task: to the topic of a service that handles its type, its class topic, or its
 * class's waiting topic (see RoutingTable). A record's topic is decided once, so a round groups,
 * encodes and sends it alike even if the registry changes meanwhile.
 */
export class TaskMessages {
  readonly #codec: AvroCodec;
  readonly #topics: TopicNames;
  readonly #routes: Routes;
  readonly #decided = new WeakMap<HotRecord, string>();

  constructor(codec: AvroCodec, topics: TopicNames, routes: Routes = () => undefined) {
    this.#codec = codec;
    this.#topics = topics;
    this.#routes = routes;
  }

  topic(record: HotRecord): string {
    let topic = this.#decided.get(record);
    if (topic === undefined) {
      topic = this.#route(record);
      this.#decided.set(record, topic);
    }
    return topic;
  }

  /** The class topic: what one dispatch transaction covers (a class's services share it). */
  classTopic(record: HotRecord): string {
    return this.#topics.tasks(record.resource_class);
  }

  #route(r: HotRecord): string {
    const route = this.#routes()?.route(r.resource_class, r.job_type, r.job_id);
    if (!route || route.kind === 'class') return this.#topics.tasks(r.resource_class);
    if (route.kind === 'service') return this.#topics.serviceTasks(r.resource_class, route.service);
    return this.#topics.waiting(r.resource_class);
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

  /** Groups records by task topic (or by class topic: `by`), keeping their order. */
  byTopic(records: readonly HotRecord[], by: 'topic' | 'class' = 'topic'): Map<string, HotRecord[]> {
    const groups = new Map<string, HotRecord[]>();
    for (const r of records) {
      const topic = by === 'topic' ? this.topic(r) : this.classTopic(r);
      const g = groups.get(topic) ?? [];
      groups.set(topic, g);
      g.push(r);
    }
    return groups;
  }
}
