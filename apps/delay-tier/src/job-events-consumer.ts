import { LifecycleService } from '@kairos/core';
import { groupMemberConfig } from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { DispatchLanes } from './dispatch-lanes.js';
import { applyJobEvents, type EventApplierDeps } from './event-applier.js';
import type { Ownership } from './ownership.js';

/**
 * Events applied per Redis call (one script run): bounded so one call keeps Redis busy for a
 * millisecond or two, not longer, while dispatch rounds wait behind it.
 */
const APPLY_CHUNK = 100;

export interface JobEventsConsumerOptions {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly groupId: string;
  readonly sessionTimeoutMs?: number | undefined;
  /** Takes and drops partitions as the group assigns them. */
  readonly ownership: Ownership;
  /** Visits every partition again once a rebalance is over. */
  readonly dispatcher: Pick<DispatchLanes, 'refresh'>;
  readonly applier: EventApplierDeps;
  readonly log: Logger;
  /** Called when the consumer crashed for good (the app should exit and be restarted). */
  readonly onFatal?: ((err: Error) => void) | undefined;
}

/**
 * The tier's member of the consumer group on kairos.job-events: the group's assignment decides
 * which partitions this instance owns, and each owned partition's events feed its hot set.
 */
export class JobEventsConsumer extends LifecycleService {
  readonly #o: JobEventsConsumerOptions;
  readonly #consumer: Consumer;

  constructor(options: JobEventsConsumerOptions) {
    super('job-events consumer');
    this.#o = options;
    this.#consumer = options.kafka.consumer(
      groupMemberConfig({
        groupId: options.groupId,
        ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
      }),
    );
  }

  protected async onStart(): Promise<void> {
    const consumer = this.#consumer;
    const { topic, ownership, log } = this.#o;
    consumer.on(consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      log.fatal({ err: e.payload.error }, 'consumer crashed and will not restart');
      this.#o.onFatal?.(e.payload.error);
    });
    await consumer.connect();
    consumer.on(consumer.events.REBALANCING, () => ownership.suspend());
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const partitions = e.payload.memberAssignment[topic] ?? [];
      ownership.assign(partitions);
      // The rebalance is over: every partition still ours may dispatch again.
      this.#o.dispatcher.refresh();
      // Partitions paused after losing them to another owner are ours again to read.
      consumer.resume([{ topic, partitions }]);
      log.info({ partitions }, 'owning job-events partitions');
    });
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatchAutoResolve: false,
      // Partitions are independent (own hot set, own epoch): apply their batches in parallel.
      partitionsConsumedConcurrently: 8,
      eachBatch: (payload) => this.#batch(payload),
    });
  }

  protected async onStop(): Promise<void> {
    await this.#consumer.disconnect();
    await this.#o.applier.dead.stop();
  }

  async #batch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, applier } = this.#o;
    for (let i = 0; i < batch.messages.length; i += APPLY_CHUNK) {
      if (!isRunning() || isStale()) return;
      const chunk = batch.messages.slice(i, i + APPLY_CHUNK);
      if (!(await applyJobEvents(applier, topic, batch.partition, chunk))) {
        // Not ours any more: stop fetching it (until a rebalance gives it back) rather than
        // refetching in a loop. If it is still ours, the events are applied on refetch.
        if (this.#o.ownership.epoch(batch.partition) === undefined) {
          this.#consumer.pause([{ topic, partitions: [batch.partition] }]);
        }
        return;
      }
      const last = chunk[chunk.length - 1];
      if (last) resolveOffset(last.offset);
      await heartbeat();
    }
  }
}
