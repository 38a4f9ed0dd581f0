import { isKairosError } from '@kairos/core';
import {
  inTransaction,
  lockJobs,
  recordDispatches,
  recordResults,
  type DispatchRecord,
  type Pool,
  type ResultRecord,
} from '@kairos/db';
import type { AvroCodec, TopicNames } from '@kairos/kafka';
import { silentLogger, type Logger } from '@kairos/observability';
import type { TaskDispatchRecord, TaskResultRecord } from '@kairos/schemas';
import type { Consumer, Kafka } from 'kafkajs';

export interface TrackerOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly pool: Pool;
  readonly topics: TopicNames;
  /** Resource classes whose task topics are tracked. */
  readonly resourceClasses: readonly string[];
  /** Consumer group. Default: `kairos-tracker`. */
  readonly groupId?: string;
  readonly log?: Logger;
  /** Called when the Kafka consumer crashed for good (the app should exit and be restarted). */
  readonly onFatal?: (err: Error) => void;
  /** Called after each batch is durable (tests and metrics). */
  readonly onApplied?: (dispatches: number, results: number) => void;
}

/**
 * Tracks what happened to every job: dispatches (from the task topics) and attempt results
 * (from kairos.task-results) are applied to PostgreSQL one Kafka batch per transaction, fenced,
 * and offsets are committed only after that transaction commits.
 */
export class Tracker {
  readonly #o: TrackerOptions;
  readonly #log: Logger;
  readonly #consumer: Consumer;

  constructor(options: TrackerOptions) {
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.#consumer = options.kafka.consumer({ groupId: options.groupId ?? 'kairos-tracker' });
  }

  async start(): Promise<void> {
    const taskTopics = this.#o.resourceClasses.map((rc) => this.#o.topics.tasks(rc));
    const resultsTopic = this.#o.topics.taskResults;
    this.#consumer.on(this.#consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      this.#log.fatal({ err: e.payload.error }, 'consumer crashed and will not restart');
      this.#o.onFatal?.(e.payload.error);
    });
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topics: [...taskTopics, resultsTopic], fromBeginning: true });
    await this.#consumer.run({
      // Batches of different partitions touch different jobs: apply them in parallel.
      partitionsConsumedConcurrently: 4,
      eachBatch: async ({ batch, heartbeat }) => {
        const dispatches: DispatchRecord[] = [];
        const results: ResultRecord[] = [];
        for (const m of batch.messages) {
          if (!m.value) continue;
          let decoded: unknown;
          try {
            decoded = await this.#o.codec.decode(batch.topic, m.value);
          } catch (err) {
            if (!isKairosError(err, 'UNDECODABLE')) throw err; // registry down: the batch is retried
            this.#log.error({ err, topic: batch.topic, offset: m.offset }, 'undecodable message skipped');
            continue;
          }
          if (batch.topic === resultsTopic) results.push(toResult(decoded as TaskResultRecord));
          else dispatches.push(toDispatch(decoded as TaskDispatchRecord));
        }
        await inTransaction(this.#o.pool, async (tx) => {
          await lockJobs(tx, [...dispatches.map((d) => d.jobId), ...results.map((r) => r.jobId)]);
          await recordDispatches(tx, dispatches);
          await recordResults(tx, results);
        });
        this.#log.debug(
          { topic: batch.topic, dispatches: dispatches.length, results: results.length },
          'applied',
        );
        this.#o.onApplied?.(dispatches.length, results.length);
        await heartbeat();
      },
    });
  }

  async stop(): Promise<void> {
    await this.#consumer.disconnect();
  }
}

function toDispatch(d: TaskDispatchRecord): DispatchRecord {
  return {
    jobId: d.job_id,
    dueAt: new Date(d.due_at),
    fence: d.fence,
    attempt: d.attempt,
    epoch: d.epoch,
    dispatchedAt: new Date(d.dispatched_at),
  };
}

function toResult(r: TaskResultRecord): ResultRecord {
  return {
    jobId: r.job_id,
    dueAt: new Date(r.due_at),
    fence: r.fence,
    attempt: r.attempt,
    epoch: r.epoch,
    outcome: r.outcome,
    errorClass: r.error?.error_class ?? null,
    errorMessage: r.error?.message ?? null,
    workerId: r.worker_id,
    startedAt: new Date(r.started_at),
    finishedAt: new Date(r.finished_at),
  };
}
