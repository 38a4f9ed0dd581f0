import { isKairosError } from '@kairos/core';
import { AvroCodec, createKafka, createRegistryClient, topicNames } from '@kairos/kafka';
import { SCHEMAS, type TaskDispatchRecord, type TaskResultRecord } from '@kairos/schemas';
import type { Batch, Consumer, KafkaMessage, Producer } from 'kafkajs';
import { taskContext, type Handler } from './context.js';
import { compileWorkerOptions, type CompiledWorkerOptions, type WorkerOptions } from './options.js';
import { ResultPublisher } from './results.js';

interface Task {
  readonly dispatch: TaskDispatchRecord;
  /** Settles when the attempt's result is acknowledged by Kafka (or could not be published). */
  readonly durable: (ok: boolean) => void;
}

/** Error class reported for a task whose job type has no registered handler. */
export const NO_HANDLER = 'NO_HANDLER';

/**
 * A Kairos worker. Subscribes to the task topics of its resource classes, runs the handler
 * registered for each task's job type with bounded concurrency, never before the task's due
 * time, and publishes each attempt's result. The consumer callback hands each batch's tasks to
 * the handler pool and, while they run, only heartbeats (so the group membership stays alive
 * however long a handler runs); a message's offset is resolved, and then committed by the
 * consumer, only once it and every message before it has its result acknowledged by Kafka.
 * Partitions are consumed concurrently, so one slow task holds back only its own partition.
 */
export class Worker {
  readonly #o: CompiledWorkerOptions;
  readonly #handlers = new Map<string, Handler>();
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #results: ResultPublisher;
  readonly #queue: Task[] = [];
  readonly #abort = new AbortController();
  readonly #idle = new Set<() => void>();
  #held = 0;
  #running = 0;
  #started = false;
  #stopping = false;

  constructor(options: WorkerOptions) {
    this.#o = compileWorkerOptions(options);
    const kafka = createKafka({ brokers: this.#o.brokers, clientId: `kairos-worker-${this.#o.workerId}` });
    this.#consumer = kafka.consumer({ groupId: this.#o.groupId });
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#codec = new AvroCodec(createRegistryClient({ url: this.#o.registryUrl }));
    this.#results = new ResultPublisher(
      this.#producer,
      this.#codec,
      topicNames(this.#o.topicPrefix).taskResults,
    );
  }

  get workerId(): string {
    return this.#o.workerId;
  }

  /** Registers the handler of a job type (one per type). */
  handle<P = unknown>(jobType: string, handler: Handler<P>): this {
    if (this.#handlers.has(jobType)) throw new RangeError(`a handler for "${jobType}" is already registered`);
    this.#handlers.set(jobType, handler as Handler);
    return this;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('worker already started');
    this.#started = true;
    const names = topicNames(this.#o.topicPrefix);
    await this.#codec.register(names.taskResults, SCHEMAS.taskResult);
    await this.#producer.connect();
    await this.#consumer.connect();
    const topics = this.#o.resourceClasses.map((rc) => names.tasks(rc));
    this.#consumer.on(this.#consumer.events.GROUP_JOIN, (e) => {
      this.#o.logger.info({ assignment: e.payload.memberAssignment }, 'worker joined its group');
    });
    await this.#consumer.subscribe({ topics, fromBeginning: true });
    await this.#consumer.run({
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#o.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.#batch(payload),
    });
    this.#o.logger.info({ workerId: this.#o.workerId, topics, groupId: this.#o.groupId }, 'worker started');
  }

  /** Stops taking tasks, lets running handlers finish (aborting them after the timeout), commits, leaves. */
  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    this.#stopping = true;
    try {
      this.#consumer.pause(
        this.#o.resourceClasses.map((rc) => ({ topic: topicNames(this.#o.topicPrefix).tasks(rc) })),
      );
      // Tasks not started yet are not started now; they are delivered again after we leave.
      for (const task of this.#queue.splice(0)) task.durable(false);
      const within = (ms: number) =>
        Promise.race([
          this.#whenIdle().then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
        ]);
      if (!(await within(this.#o.shutdownTimeoutMs))) {
        this.#abort.abort(new Error('worker stopping'));
        // A handler that ignores its abort signal cannot hold shutdown forever.
        if (!(await within(5_000)))
          this.#o.logger.warn({ running: this.#running }, 'handlers still running at exit');
      }
    } finally {
      await this.#consumer.disconnect().catch(() => undefined);
      await this.#producer.disconnect().catch(() => undefined);
    }
    this.#o.logger.info({ workerId: this.#o.workerId }, 'worker stopped');
  }

  async #batch({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
  }: {
    batch: Batch;
    resolveOffset: (offset: string) => void;
    heartbeat: () => Promise<void>;
    isRunning: () => boolean;
    isStale: () => boolean;
  }): Promise<void> {
    const submitted: { offset: string; durable: Promise<boolean> }[] = [];
    for (const message of batch.messages) {
      if (!isRunning() || isStale()) break;
      submitted.push({
        offset: message.offset,
        durable: this.#submit(batch.topic, batch.partition, message),
      });
    }
    for (const { offset, durable } of submitted) {
      // Wait for this message's result; heartbeat meanwhile so the group keeps the membership.
      for (;;) {
        const settled = await Promise.race([
          durable,
          new Promise<'tick'>((r) => setTimeout(() => r('tick'), 1000)),
        ]);
        if (settled === 'tick') {
          // A rebalance is under way: stop holding the group up. What is resolved so far gets
          // committed; the rest is delivered again to whoever owns the partition next.
          if (!isRunning() || isStale()) return;
          await heartbeat().catch(() => undefined);
          continue;
        }
        if (!settled && this.#stopping) return; // leaving: redelivered to the next owner
        if (!settled) {
          // Not durable: leave it and the rest unresolved; they are delivered again.
          throw new Error(`result of ${batch.topic}/${batch.partition}@${offset} was not published`);
        }
        break;
      }
      resolveOffset(offset);
    }
    await heartbeat().catch(() => undefined);
  }

  /** Decodes a task and queues it (holding it until its due time); resolves when its result is durable. */
  async #submit(topic: string, partition: number, message: KafkaMessage): Promise<boolean> {
    let dispatch: TaskDispatchRecord;
    try {
      dispatch = (await this.#codec.decode(topic, message.value ?? Buffer.alloc(0))) as TaskDispatchRecord;
    } catch (err) {
      if (!isKairosError(err, 'UNDECODABLE')) {
        // The registry is unreachable: not this task's fault; the batch is retried.
        this.#o.logger.warn(
          { err, topic, partition, offset: message.offset },
          'task not decoded yet; retrying',
        );
        return false;
      }
      // A value that can never decode cannot be run; skipping keeps the partition moving.
      this.#o.logger.error({ err, topic, partition, offset: message.offset }, 'undecodable task skipped');
      return true;
    }
    return new Promise<boolean>((durable) => {
      const task: Task = { dispatch, durable };
      // Never early: a task that arrives before its due time waits for it (outside the queue).
      const wait = dispatch.due_at - Date.now();
      if (wait > 0) {
        this.#held++;
        setTimeout(() => {
          this.#held--;
          if (this.#stopping) task.durable(false);
          else this.#enqueue(task);
        }, wait);
      } else {
        this.#enqueue(task);
      }
    });
  }

  #enqueue(task: Task): void {
    this.#queue.push(task);
    this.#pump();
  }

  #pump(): void {
    while (this.#running < this.#o.concurrency && this.#queue.length > 0) {
      const task = this.#queue.shift();
      if (!task) break;
      this.#running++;
      void this.#run(task).finally(() => {
        this.#running--;
        this.#pump();
        if (this.#inFlight() === 0) for (const resolve of this.#idle) resolve();
      });
    }
  }

  async #run(task: Task): Promise<void> {
    const d = task.dispatch;
    const startedAt = Date.now();
    let error: TaskResultRecord['error'] = null;
    const handler = this.#handlers.get(d.job_type);
    if (!handler) {
      error = {
        error_class: NO_HANDLER,
        message: `no handler for job type "${d.job_type}" on ${this.#o.workerId}`,
      };
    } else {
      try {
        await handler(JSON.parse(d.payload) as unknown, taskContext(d, this.#abort.signal));
      } catch (err) {
        error = {
          error_class: err instanceof Error ? err.name : 'Error',
          message: err instanceof Error ? err.message : String(err),
        };
      }
    }
    const result: TaskResultRecord = {
      job_id: d.job_id,
      tenant_id: d.tenant_id,
      attempt: d.attempt,
      fence: d.fence,
      epoch: d.epoch,
      shard: d.shard,
      outcome: error ? 'FAILED' : 'SUCCEEDED',
      error,
      worker_id: this.#o.workerId,
      due_at: d.due_at,
      started_at: startedAt,
      finished_at: Date.now(),
    };
    try {
      await this.#results.publish(result);
      task.durable(true);
    } catch (err) {
      // Left unresolved: the task is delivered again (at least once).
      this.#o.logger.error({ err, jobId: d.job_id }, 'result not published; the task will be redelivered');
      task.durable(false);
    }
  }

  #inFlight(): number {
    return this.#running + this.#queue.length + this.#held;
  }

  #whenIdle(): Promise<void> {
    if (this.#inFlight() === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#idle.delete(done);
        resolve();
      };
      this.#idle.add(done);
    });
  }
}
