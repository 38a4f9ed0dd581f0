import { shardOf } from '@kairos/core';
import type { Kafka, Message, Producer } from 'kafkajs';
import { HEADERS } from './headers.js';
import type { TopicNames } from './topics.js';

/** An outbox row as PostgreSQL committed it (the shape of @kairos/db's OutboxRow). */
export interface RelayedRow {
  readonly id: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly type: string;
  readonly payload: Buffer;
  readonly jobId: string;
  readonly tenantId: string;
  readonly dueAt: Date;
  readonly traceparent: string | null;
}

export interface OutboxRelayOptions {
  readonly kafka: Kafka;
  readonly topics: TopicNames;
  /** Partitions of the job-events topic (KAIROS_JOB_EVENT_PARTITIONS). Required. */
  readonly jobEventPartitions: number;
  /** Rows waiting to be sent beyond this are left to Debezium. Default: 10,000. */
  readonly maxQueued?: number;
  /** A send failed or rows were left out; Debezium delivers them (later). */
  readonly onError?: (err: unknown, rows: number) => void;
}

/** The outbox rows of job events route to kairos.job-events (the connector's aggregatetype). */
const JOB_EVENTS = 'job-events';

/**
 * The fast path of the outbox: publishes committed job events straight to kairos.job-events,
 * exactly as the Debezium outbox router does (same partition, key, value and headers, plus
 * `kairos-relay`), so an immediate job does not wait for CDC's polling (tens of ms). Debezium
 * still publishes every row from the WAL, the path that survives any crash; consumers ignore the
 * second copy by version. Sends one batch at a time, each with everything that committed while the
 * previous one was in flight; a failed send is dropped (Debezium covers it), never retried here.
 * Other aggregates (dead letters) go through Debezium only: their readers do not deduplicate.
 */
export class OutboxRelay {
  readonly #o: OutboxRelayOptions;
  readonly #producer: Producer;
  readonly #maxQueued: number;
  #queue: Message[] = [];
  #sending: Promise<void> | undefined;
  #started = false;

  constructor(options: OutboxRelayOptions) {
    if (!Number.isInteger(options.jobEventPartitions) || options.jobEventPartitions < 1)
      throw new RangeError(
        `jobEventPartitions must be a positive integer, got ${options.jobEventPartitions}`,
      );
    this.#o = options;
    this.#maxQueued = options.maxQueued ?? 10_000;
    // Not idempotent: its endless retries would hold the queue while Kafka is away; a lost or
    // doubled copy here is harmless. acks=all still, like every Kairos producer.
    this.#producer = options.kafka.producer({ retry: { retries: 2 }, allowAutoTopicCreation: false });
  }

  async start(): Promise<void> {
    await this.#producer.connect();
    this.#started = true;
  }

  /** Queues committed rows for sending; never throws, never waits. */
  publish(rows: readonly RelayedRow[]): void {
    if (!this.#started) return;
    const messages = rows.filter((r) => r.aggregateType === JOB_EVENTS).map((r) => this.#message(r));
    const room = this.#maxQueued - this.#queue.length;
    if (messages.length > room)
      this.#o.onError?.(new Error('outbox relay queue full'), messages.length - room);
    this.#queue.push(...messages.slice(0, Math.max(0, room)));
    this.#sending ??= this.#drain();
  }

  /** Sends what is queued, then disconnects. */
  async stop(): Promise<void> {
    this.#started = false;
    await this.#sending;
    await this.#producer.disconnect();
  }

  async #drain(): Promise<void> {
    // Lets the rest of this turn's commits join the first batch.
    await Promise.resolve();
    while (this.#queue.length > 0) {
      const messages = this.#queue;
      this.#queue = [];
      try {
        await this.#producer.send({ topic: this.#o.topics.jobEvents, acks: -1, messages });
      } catch (err) {
        this.#o.onError?.(err, messages.length);
      }
    }
    this.#sending = undefined;
  }

  #message(r: RelayedRow): Message {
    return {
      key: r.aggregateId,
      value: r.payload,
      // The shard is the partition Kafka's default partitioner gives the key (DESIGN.md §4).
      partition: shardOf(r.aggregateId, this.#o.jobEventPartitions),
      headers: {
        id: r.id,
        'kairos-event-type': r.type,
        [HEADERS.jobId]: r.jobId,
        [HEADERS.tenant]: r.tenantId,
        [HEADERS.dueAt]: String(r.dueAt.getTime()),
        ...(r.traceparent === null ? {} : { [HEADERS.traceparent]: r.traceparent }),
        [HEADERS.relay]: 'direct',
      },
    };
  }
}

/** What an app's environment says of the relay (KairosEnv's fields). */
export interface RelaySettings {
  readonly outboxRelay: boolean;
  readonly jobEventPartitions: number;
}

/**
 * An app's relay, started, or none when the deployment leaves job events to Debezium alone
 * (KAIROS_OUTBOX_RELAY=false). Failed sends are logged as warnings.
 */
export async function startOutboxRelay(
  kafka: Kafka,
  topics: TopicNames,
  settings: RelaySettings,
  log?: { warn: (obj: object, msg: string) => void },
): Promise<OutboxRelay | undefined> {
  if (!settings.outboxRelay) return undefined;
  const relay = new OutboxRelay({
    kafka,
    topics,
    jobEventPartitions: settings.jobEventPartitions,
    onError: (err, rows) => log?.warn({ err, rows }, 'outbox relay: events left to Debezium'),
  });
  await relay.start();
  return relay;
}
