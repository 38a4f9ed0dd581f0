import type { Consumer, IMemberAssignment, Kafka, KafkaMessage } from 'kafkajs';
import { groupMemberConfig } from './client.js';

/** A position to commit: the next offset to read in a topic partition. */
export interface PartitionOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** The partitions a group member owns, by topic. */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>;

export interface HandoffConsumerOptions {
  readonly kafka: Kafka;
  readonly groupId: string;
  /** Default: DEFAULT_SESSION_TIMEOUT_MS. */
  readonly sessionTimeoutMs?: number;
  readonly topics: readonly string[];
  /** Partitions whose batches are handed over at once. Default: 1. */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * Takes a fetched batch of one partition without waiting for its work, and says how many of its
   * first messages it took: the consumer reads on past those (nothing is committed by that).
   */
  readonly take: (topic: string, partition: number, messages: readonly KafkaMessage[]) => number;
  /**
   * What this member owns after each join of the group (empty once it left it, e.g. a crashed
   * consumer that KafkaJS restarts): a partition missing from it was revoked.
   */
  readonly onAssignment: (assignment: Assignment) => void;
  /** A rebalance starts: commit what is done now, while the group still takes commits. */
  readonly onRebalancing: () => void;
  /** The consumer crashed; `restart` says whether it joins the group again on its own. */
  readonly onCrash?: (error: Error, restart: boolean) => void;
}

/**
 * A group member whose callback only hands messages over (so a rebalance or a heartbeat never
 * waits for work), and whose offsets move only by commit(): the caller commits each partition up
 * to what it has finished. Consumption can be paused for backpressure, of every topic or some.
 */
export class HandoffConsumer {
  readonly #o: HandoffConsumerOptions;
  readonly #consumer: Consumer;
  readonly #paused = new Set<string>();

  constructor(options: HandoffConsumerOptions) {
    this.#o = options;
    this.#consumer = options.kafka.consumer(
      groupMemberConfig({
        groupId: options.groupId,
        ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
      }),
    );
  }

  async start(): Promise<void> {
    const c = this.#consumer;
    c.on(c.events.GROUP_JOIN, (e) => {
      // A consumer restarted after a crash starts unpaused.
      if (this.#paused.size > 0) this.#apply('pause', [...this.#paused]);
      this.#o.onAssignment(assignmentOf(e.payload.memberAssignment));
    });
    c.on(c.events.REBALANCING, () => this.#o.onRebalancing());
    c.on(c.events.CRASH, (e) => {
      // A crashed consumer has left its group: it owns nothing until it joins again.
      this.#o.onAssignment(new Map());
      this.#o.onCrash?.(e.payload.error, e.payload.restart);
    });
    await c.connect();
    await c.subscribe({ topics: [...this.#o.topics], fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#o.partitionsConsumedConcurrently ?? 1,
      eachBatch: ({ batch, resolveOffset, isRunning, isStale }) => {
        // Stopping, or a seek is pending: the batch is fetched again.
        if (!isRunning() || isStale()) return Promise.resolve();
        const taken = this.#o.take(batch.topic, batch.partition, batch.messages);
        const last = batch.messages[taken - 1];
        if (last) resolveOffset(last.offset);
        return Promise.resolve();
      },
    });
  }

  /** Commits positions (each the next offset to read); rejects if the group refused them. */
  async commit(offsets: readonly PartitionOffset[]): Promise<void> {
    if (offsets.length === 0) return;
    await this.#consumer.commitOffsets(offsets.map((o) => ({ ...o })));
  }

  /** Whether fetching this topic is paused. */
  isPaused(topic: string): boolean {
    return this.#paused.has(topic);
  }

  /** Stops fetching these topics, by default every subscribed one (what was taken stays taken). */
  pause(topics: readonly string[] = this.#o.topics): void {
    for (const t of topics) this.#paused.add(t);
    this.#apply('pause', topics);
  }

  /** Fetches these topics again, by default every subscribed one. */
  resume(topics: readonly string[] = this.#o.topics): void {
    for (const t of topics) this.#paused.delete(t);
    this.#apply('resume', topics);
  }

  /** Leaves the group and disconnects; commit first, since a stopped consumer commits nothing. */
  stop(): Promise<void> {
    return this.#consumer.disconnect();
  }

  #apply(what: 'pause' | 'resume', topics: readonly string[]): void {
    try {
      this.#consumer[what](topics.map((topic) => ({ topic })));
    } catch {
      // Not running (between a crash and its restart): the join applies the state.
    }
  }
}

function assignmentOf(a: IMemberAssignment): Assignment {
  return new Map(Object.entries(a).map(([topic, partitions]) => [topic, new Set(partitions)]));
}
