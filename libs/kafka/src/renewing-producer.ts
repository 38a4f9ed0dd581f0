import type { InstrumentationEvent, Producer, ProducerBatch, ProducerRecord, RecordMetadata } from 'kafkajs';

/**
 * Answers after which a KafkaJS idempotent producer is broken for good: the broker's idea of its
 * sequence numbers (or of its id) no longer matches the producer's, and KafkaJS never asks for a
 * new producer id, so every later send to that partition fails the same way (tulios/kafkajs#598).
 * Seen here when a partition leader was SIGKILLed with a produce in flight.
 */
const SEQUENCE_DESYNC = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
]);

/** Whether err (or an error it wraps, as KafkaJS's retrier does) is a sequence desync. */
export function isSequenceDesync(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && SEQUENCE_DESYNC.has(type)) return true;
  }
  return false;
}

type Listener = (event: InstrumentationEvent<unknown>) => void;

/**
 * An idempotent producer that never reuses a sequence number whose fate is unknown. KafkaJS
 * advances a partition's sequence only when a send succeeds; after a failed one (a leader killed
 * mid-request, retries exhausted) the broker may still have appended that batch, and the next
 * send reuses its numbers: refused as OUT_OF_ORDER_SEQUENCE_NUMBER when its size differs, and
 * acknowledged but dropped as a duplicate when the size matches — a lost write. So after any
 * failed send the next one first replaces the producer (a new producer id, sequences from 0, the
 * listeners moved over), as the Java client bumps its epoch; a send refused for a desync is sent
 * once more on the new one (the broker refused it, so it is written once). A resend may duplicate
 * a batch the broker did append: at least once, never lost. Concurrent sends share one
 * replacement.
 */
export class RenewingProducer implements Producer {
  readonly #make: () => Producer;
  #inner: Producer;
  #connected = false;
  /** A send failed: the inner producer's sequence numbers may be out of step with the brokers. */
  #suspect = false;
  #renewing: Promise<void> | undefined;
  /** Listeners added through on(), with the remover on the current inner producer. */
  readonly #listeners: { event: string; listener: Listener; remove: () => void }[] = [];
  /** How many times the producer was replaced (for logs and tests). */
  renewals = 0;

  constructor(make: () => Producer) {
    this.#make = make;
    this.#inner = make();
  }

  get events(): Producer['events'] {
    return this.#inner.events;
  }

  async connect(): Promise<void> {
    await this.#inner.connect();
    this.#connected = true;
  }

  async disconnect(): Promise<void> {
    this.#connected = false;
    await this.#renewing?.catch(() => undefined);
    await this.#inner.disconnect();
  }

  isIdempotent(): boolean {
    return this.#inner.isIdempotent();
  }

  // KafkaJS types on() as one overload per event; every listener here is kept and moved alike.
  readonly on = ((eventName: string, listener: Listener) => {
    const entry = { event: eventName, listener, remove: this.#listen(this.#inner, eventName, listener) };
    this.#listeners.push(entry);
    return () => {
      entry.remove();
      this.#listeners.splice(this.#listeners.indexOf(entry), 1);
    };
  }) as unknown as Producer['on'];

  transaction(): ReturnType<Producer['transaction']> {
    return this.#inner.transaction();
  }

  logger(): ReturnType<Producer['logger']> {
    return this.#inner.logger();
  }

  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    return this.#renewingOnDesync((p) => p.send(record));
  }

  sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    return this.#renewingOnDesync((p) => p.sendBatch(batch));
  }

  async #renewingOnDesync<T>(op: (p: Producer) => Promise<T>): Promise<T> {
    if (this.#suspect && this.#connected) await this.#renew();
    const used = this.#inner;
    try {
      return await op(used);
    } catch (err) {
      if (!this.#connected || this.#inner !== used) throw err;
      this.#suspect = true;
      if (!isSequenceDesync(err)) throw err;
      await this.#renew();
      return op(this.#inner);
    }
  }

  /** Replaces the inner producer (one replacement for concurrent callers); throws if the new one cannot connect. */
  #renew(): Promise<void> {
    this.#renewing ??= (async () => {
      const failed = this.#inner;
      const next = this.#make();
      try {
        await next.connect();
      } catch (err) {
        await next.disconnect().catch(() => undefined);
        throw err;
      }
      for (const l of this.#listeners) {
        l.remove();
        l.remove = this.#listen(next, l.event, l.listener);
      }
      this.#inner = next;
      this.#suspect = false;
      this.renewals++;
      next.logger().warn('idempotent producer replaced after a failed send', { renewals: this.renewals });
      // Not awaited: a disconnect waits for requests in flight, and one may be stuck on the broker
      // that died; sends must not wait for it.
      void failed.disconnect().catch(() => undefined);
    })().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  #listen(p: Producer, eventName: string, listener: Listener): () => void {
    const on = p.on.bind(p) as (e: string, l: Listener) => () => void;
    return on(eventName, listener);
  }
}
