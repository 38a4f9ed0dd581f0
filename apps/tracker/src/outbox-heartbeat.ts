import { setTimeout } from 'node:timers/promises';
import { LifecycleService } from '@kairos/core';
import { tailTopic } from '@kairos/kafka';
import { silentLogger, type Logger } from '@kairos/observability';
import type { Kafka } from 'kafkajs';

/** Longest a fetch of heartbeats waits on the broker, ms: about how long a stop may take. */
const FETCH_WAIT_MS = 1000;

export interface OutboxHeartbeatOptions {
  readonly kafka: Kafka;
  /** Where the outbox connector's heartbeat rows are routed (`kairos.heartbeat`). */
  readonly topic: string;
  /** After the topic could not be read (Kafka away, not created yet), try again after this, ms. Default: 10,000. */
  readonly retryMs?: number;
  readonly log?: Logger;
}

/**
 * Follows the outbox connector's heartbeats: every few seconds Debezium's heartbeat action
 * inserts an outbox row carrying its insert time, which reaches kairos.heartbeat through the same
 * WAL, connector and router as every job event. The age of the newest one seen is the outbox's
 * publication lag, known even when no job moves; it grows while the connector, Connect or Kafka
 * is stalled. Reads through a private consumer group that commits nothing (libs/kafka tailTopic).
 */
export class OutboxHeartbeat extends LifecycleService {
  readonly #o: OutboxHeartbeatOptions;
  readonly #log: Logger;
  #lastBeatMs: number | undefined;
  #startedMs = 0;
  #abort: AbortController | undefined;
  #running: Promise<void> | undefined;

  constructor(options: OutboxHeartbeatOptions) {
    super('outbox heartbeat');
    this.#o = options;
    this.#log = options.log ?? silentLogger();
  }

  /** Now minus the newest heartbeat's insert time (before the first: minus the start), ms; undefined before start. */
  lagMs(): number | undefined {
    if (this.#startedMs === 0) return undefined;
    return Math.max(0, Date.now() - (this.#lastBeatMs ?? this.#startedMs));
  }

  protected onStart(): Promise<void> {
    this.#startedMs = Date.now();
    const abort = new AbortController();
    this.#abort = abort;
    this.#running = this.#follow(abort.signal);
    return Promise.resolve();
  }

  protected async onStop(): Promise<void> {
    this.#abort?.abort();
    await this.#running;
  }

  async #follow(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const beats = tailTopic(this.#o.kafka, {
          topic: this.#o.topic,
          start: { from: 'end', last: 1 },
          // A stop waits for the fetch in flight (KafkaJS cannot cancel one): the wait of the
          // apps' group members, a fetch a second while idle, keeps stopping prompt.
          maxWaitMs: FETCH_WAIT_MS,
          follow: true,
          signal,
        });
        for await (const r of beats) {
          const ms = Number(r.value?.toString('utf8'));
          if (Number.isFinite(ms) && ms > (this.#lastBeatMs ?? 0)) this.#lastBeatMs = ms;
        }
      } catch (err) {
        this.#log.warn({ err, topic: this.#o.topic }, 'cannot follow the outbox heartbeats; retrying');
      }
      // Stopping ends the tail: no retry to wait for then.
      if (signal.aborted) return;
      await setTimeout(this.#o.retryMs ?? 10_000, undefined, { signal }).catch(() => undefined);
    }
  }
}
