import type { Message, Producer } from 'kafkajs';

const MAX_PER_REQUEST = 500;
const MAX_BYTES_PER_REQUEST = 512 * 1024;

interface Queued {
  readonly message: Message;
  readonly done: () => void;
  readonly fail: (err: unknown) => void;
}

/**
 * Sends messages to one topic in small batches: requests made within the same few milliseconds
 * share one produce request (the idempotent producer allows one request in flight). Each send
 * resolves once Kafka acknowledged it on all in-sync replicas (acks=all).
 */
export class BatchSender {
  readonly #producer: Producer;
  readonly #topic: string;
  readonly #queue: Queued[] = [];
  /** Set and cleared synchronously, so a send after the last loop turn always starts a flush. */
  #flushing = false;
  #drained: Promise<void> = Promise.resolve();

  constructor(producer: Producer, topic: string) {
    this.#producer = producer;
    this.#topic = topic;
  }

  send(message: Message): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.#queue.push({ message, done, fail });
      if (!this.#flushing) {
        this.#flushing = true;
        this.#drained = this.#flush();
      }
    });
  }

  async #flush(): Promise<void> {
    // Let the sends of this tick join the request.
    await new Promise((r) => setImmediate(r));
    while (this.#queue.length > 0) {
      // Bounded, so one partition's share stays under the broker's record batch limit (1 MiB).
      let take = 0;
      let bytes = 0;
      while (take < this.#queue.length && take < MAX_PER_REQUEST) {
        bytes += (this.#queue[take]?.message.value as Buffer | null)?.length ?? 0;
        if (take > 0 && bytes > MAX_BYTES_PER_REQUEST) break;
        take++;
      }
      const batch = this.#queue.splice(0, take);
      try {
        await this.#producer.send({ topic: this.#topic, acks: -1, messages: batch.map((q) => q.message) });
        for (const q of batch) q.done();
      } catch (err) {
        for (const q of batch) q.fail(err);
      }
    }
    this.#flushing = false;
  }

  /** Resolves when every message sent so far is acknowledged (or failed). */
  async idle(): Promise<void> {
    while (this.#flushing) await this.#drained;
  }
}
