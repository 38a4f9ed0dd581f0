import type { AvroCodec } from '@kairos/kafka';
import { HEADERS } from '@kairos/kafka';
import { SCHEMAS, type TaskResultRecord } from '@kairos/schemas';
import type { Message, Producer } from 'kafkajs';
import { TickBatch } from './tick-batch.js';

/**
 * Publishes attempt results in small batches: results finishing in the same tick (or while the
 * previous request is under way) share one produce request. Each publish resolves once Kafka
 * acknowledged it (acks=all).
 */
export class ResultPublisher {
  readonly #codec: AvroCodec;
  readonly #topic: string;
  readonly #batch: TickBatch<Message, void>;

  constructor(producer: Producer, codec: AvroCodec, topic: string) {
    this.#codec = codec;
    this.#topic = topic;
    this.#batch = new TickBatch<Message, void>(async (messages) => {
      await producer.send({ topic, acks: -1, messages });
      return messages.map(() => ({ status: 'fulfilled', value: undefined }));
    });
  }

  /** Publishes a result; `traceparent` (the attempt's) goes along as its header. */
  async publish(result: TaskResultRecord, traceparent: string | null): Promise<void> {
    const value = await this.#codec.encode(this.#topic, SCHEMAS.taskResult, result);
    return this.#batch.add({
      key: result.job_id,
      value,
      headers: {
        [HEADERS.jobId]: result.job_id,
        [HEADERS.tenant]: result.tenant_id,
        [HEADERS.epoch]: String(result.epoch),
        [HEADERS.fence]: String(result.fence),
        [HEADERS.attempt]: String(result.attempt),
        [HEADERS.dueAt]: String(result.due_at),
        ...(traceparent !== null && { [HEADERS.traceparent]: traceparent }),
      },
    });
  }
}
