import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import { SCHEMAS } from '@kairos/schemas';
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

  async build(record: HotRecord, epoch: number, nowMs: number): Promise<Message> {
    const topic = this.topic(record);
    const headers: Record<string, string> = {
      [HEADERS.jobId]: record.job_id,
      [HEADERS.tenant]: record.tenant_id,
      [HEADERS.epoch]: String(epoch),
      [HEADERS.fence]: String(record.fence),
      [HEADERS.attempt]: String(record.attempt),
      [HEADERS.dueAt]: String(record.due_at),
    };
    if (record.traceparent) headers[HEADERS.traceparent] = record.traceparent;
    return {
      key: record.job_id,
      value: await this.#codec.encode(topic, SCHEMAS.taskDispatch, taskDispatch(record, epoch, nowMs)),
      headers,
    };
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
