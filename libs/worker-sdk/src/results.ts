import type { AvroCodec } from '@kairos/kafka';
import { HEADERS } from '@kairos/kafka';
import type { TaskResultRecord } from '@kairos/schemas';
import type { Message, Producer } from 'kafkajs';

interface Pending {
  readonly message: Message;
  readonly done: () => void;
  readonly fail: (err: unknown) => void;
}

/**
 * Publishes attempt results in small batches: results finishing within a few milliseconds share
 * one produce request. Each publish resolves once Kafka acknowledged it (acks=all).
 */
export class ResultPublisher {
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #topic: string;
  #queue: Pending[] = [];
  #flushing = false;

  constructor(producer: Producer, codec: AvroCodec, topic: string) {
    this.#producer = producer;
    this.#codec = codec;
    this.#topic = topic;
  }

  async publish(result: TaskResultRecord): Promise<void> {
    const value = await this.#codec.encode(this.#topic, result);
    const message: Message = {
      key: result.job_id,
      value,
      headers: {
        [HEADERS.jobId]: result.job_id,
        [HEADERS.tenant]: result.tenant_id,
        [HEADERS.epoch]: String(result.epoch),
        [HEADERS.fence]: String(result.fence),
        [HEADERS.attempt]: String(result.attempt),
        [HEADERS.dueAt]: String(result.due_at),
      },
    };
    return new Promise<void>((done, fail) => {
      this.#queue.push({ message, done, fail });
      if (!this.#flushing) {
        this.#flushing = true;
        void this.#flush();
      }
    });
  }

  async #flush(): Promise<void> {
    // Let results that finish in the same tick join this request.
    await new Promise((r) => setImmediate(r));
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        await this.#producer.send({ topic: this.#topic, acks: -1, messages: batch.map((p) => p.message) });
        for (const p of batch) p.done();
      } catch (err) {
        for (const p of batch) p.fail(err);
      }
    }
    this.#flushing = false;
  }
}
