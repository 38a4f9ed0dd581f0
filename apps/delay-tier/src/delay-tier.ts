import type { Pool } from '@kairos/db';
import type { AvroCodec, TopicNames } from '@kairos/kafka';
import { silentLogger, type Logger } from '@kairos/observability';
import { HotSet } from '@kairos/redis';
import type { Redis } from 'ioredis';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { Dispatcher } from './dispatcher.js';
import { applyJobEvent } from './event-applier.js';
import { Ownership } from './ownership.js';
import type { HotRecord } from './record.js';

export interface DelayTierOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly redis: Redis;
  readonly pool: Pool;
  readonly topics: TopicNames;
  /** Identifies this instance as a partition owner. Required. */
  readonly instanceId: string;
  /** Consumer group of the tier on kairos.job-events. Default: `kairos-delay-tier`. */
  readonly groupId?: string;
  /** Prefix of every Redis key. Default: ''. */
  readonly keyPrefix?: string;
  /** Most jobs popped per partition per round. Default: 500. */
  readonly batchSize?: number;
  /** Pause between dispatch rounds when nothing was due, ms (bounds lateness). Default: 20. */
  readonly idleMs?: number;
  readonly log?: Logger;
  /** Called when the Kafka consumer crashed for good (the app should exit and be restarted). */
  readonly onFatal?: (err: Error) => void;
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  /** Called for every job that expired (its deadline passed) instead of being dispatched. */
  readonly onExpired?: (record: HotRecord) => void;
  /** Called when a job enters the hot set (benchmarks, tests). */
  readonly onScheduled?: (record: HotRecord, atMs: number) => void;
}

/** Events applied concurrently within a batch; versions make their order irrelevant. */
const APPLY_CHUNK = 200;

/**
 * The delay tier: one member of the consumer group on kairos.job-events. Each owned partition's
 * events feed its Redis hot set; a dispatcher pops due jobs on Redis time and produces them to
 * `kairos.tasks.<class>`.
 */
export class DelayTier {
  readonly #o: DelayTierOptions;
  readonly #log: Logger;
  readonly #hot: HotSet;
  readonly #ownership: Ownership;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #dispatcher: Dispatcher;

  constructor(options: DelayTierOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.#hot = new HotSet(options.redis, { keyPrefix: options.keyPrefix ?? '' });
    this.#ownership = new Ownership(options.pool, this.#hot, options.instanceId, this.#log);
    this.#consumer = options.kafka.consumer({ groupId: options.groupId ?? 'kairos-delay-tier' });
    this.#producer = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#dispatcher = new Dispatcher({
      hot: this.#hot,
      pool: options.pool,
      ownership: this.#ownership,
      producer: this.#producer,
      codec: options.codec,
      topics: options.topics,
      log: this.#log,
      batchSize: options.batchSize ?? 500,
      idleMs: options.idleMs ?? 20,
      ...(options.onDispatched ? { onDispatched: options.onDispatched } : {}),
      ...(options.onExpired ? { onExpired: options.onExpired } : {}),
    });
  }

  get hotSet(): HotSet {
    return this.#hot;
  }

  ownedPartitions(): number[] {
    return this.#ownership.owned();
  }

  async start(): Promise<void> {
    await this.#producer.connect();
    this.#consumer.on(this.#consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      this.#log.fatal({ err: e.payload.error }, 'consumer crashed and will not restart');
      this.#o.onFatal?.(e.payload.error);
    });
    await this.#consumer.connect();
    const topic = this.#o.topics.jobEvents;
    this.#consumer.on(this.#consumer.events.GROUP_JOIN, (e) => {
      const partitions = e.payload.memberAssignment[topic] ?? [];
      this.#ownership.assign(partitions);
      // Partitions paused after losing them to another owner are ours again to read.
      this.#consumer.resume([{ topic, partitions }]);
      this.#log.info({ partitions }, 'owning job-events partitions');
    });
    await this.#consumer.subscribe({ topic, fromBeginning: true });
    await this.#consumer.run({
      eachBatchAutoResolve: false,
      // Partitions are independent (own hot set, own epoch): apply their batches in parallel.
      partitionsConsumedConcurrently: 8,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const deps = {
          codec: this.#o.codec,
          hot: this.#hot,
          ownership: this.#ownership,
          log: this.#log,
          onScheduled: this.#o.onScheduled,
        };
        for (let i = 0; i < batch.messages.length; i += APPLY_CHUNK) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(i, i + APPLY_CHUNK);
          const applied = await Promise.all(chunk.map((m) => applyJobEvent(deps, topic, batch.partition, m)));
          if (applied.includes(false)) {
            // Not ours any more: stop fetching it (until a rebalance gives it back) rather than
            // refetching in a loop. If it is still ours, the events are applied on refetch.
            if (this.#ownership.epoch(batch.partition) === undefined) {
              this.#consumer.pause([{ topic, partitions: [batch.partition] }]);
            }
            return;
          }
          const last = chunk[chunk.length - 1];
          if (last) resolveOffset(last.offset);
          await heartbeat();
        }
      },
    });
    this.#dispatcher.start();
  }

  async stop(): Promise<void> {
    await this.#dispatcher.stop();
    await this.#consumer.disconnect();
    await this.#producer.disconnect();
  }
}
