import { isKairosError } from '@kairos/core';
import { AvroCodec, createKafka, createRegistryClient, groupMemberConfig, topicNames } from '@kairos/kafka';
import { Leases } from '@kairos/redis';
import { Redis } from 'ioredis';
import { SCHEMAS, type TaskDispatchRecord, type TaskResultRecord } from '@kairos/schemas';
import type { Batch, Consumer, KafkaMessage, Producer } from 'kafkajs';
import { Admission } from './admission.js';
import { AttemptLease } from './attempt-lease.js';
import { taskContext, type Handler } from './context.js';
import { ZombieWriteSuppressed } from './errors.js';
import { describeFailure, PermanentError } from './failures.js';
import { compileWorkerOptions, type CompiledWorkerOptions, type WorkerOptions } from './options.js';
import { ResultPublisher } from './results.js';

interface Task {
  readonly dispatch: TaskDispatchRecord;
  /** Settles when the attempt's result is acknowledged by Kafka (or could not be published). */
  readonly durable: (ok: boolean) => void;
}

/** How long a task whose claim failed (Redis unreachable) waits before claiming again, ms. */
const CLAIM_RETRY_MS = 500;

/** How long a task refused by the breaker or the retry budget waits before asking again, ms. */
const ADMISSION_RETRY_MS = 250;

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
  readonly #redis: Redis;
  readonly #leases: Leases;
  readonly #admission: Admission;
  #zombies = 0;
  readonly #queue: Task[] = [];
  readonly #abort = new AbortController();
  readonly #idle = new Set<() => void>();
  #held = 0;
  #running = 0;
  #started = false;
  #stopping = false;
  #stopped: Promise<void> | undefined;

  constructor(options: WorkerOptions) {
    this.#o = compileWorkerOptions(options);
    const kafka = createKafka({ brokers: this.#o.brokers, clientId: `kairos-worker-${this.#o.workerId}` });
    this.#consumer = kafka.consumer(
      groupMemberConfig({ groupId: this.#o.groupId, sessionTimeoutMs: this.#o.sessionTimeoutMs }),
    );
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#codec = new AvroCodec(createRegistryClient({ url: this.#o.registryUrl }));
    // Leases live in the delay tier's Redis; a command must not wait forever on a lost Redis.
    this.#redis = new Redis(this.#o.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
    this.#redis.on('error', (err: Error) => this.#o.logger.warn({ err }, 'redis error'));
    this.#leases = new Leases(this.#redis, { keyPrefix: this.#o.redisKeyPrefix });
    this.#admission = new Admission({
      breaker: this.#o.breaker,
      retryBudget: this.#o.retryBudget,
      onBreakerChange: (jobType, from, to) =>
        this.#o.logger.warn({ jobType, from, to }, `circuit breaker of ${jobType} is ${to}`),
    });
    this.#results = new ResultPublisher(
      this.#producer,
      this.#codec,
      topicNames(this.#o.topicPrefix).taskResults,
    );
  }

  get workerId(): string {
    return this.#o.workerId;
  }

  /** The circuit breaker state of a job type on this worker. */
  breakerState(jobType: string): 'closed' | 'open' | 'ramping' {
    return this.#admission.state(jobType);
  }

  /** Attempts on which this worker found out it was a zombie (its writes are suppressed). */
  get zombieAttempts(): number {
    return this.#zombies;
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
    await this.#redis.connect();
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
  stop(): Promise<void> {
    // Called again while stopping (a zombie stopping itself, then SIGTERM): the same stop.
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
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
      await this.#redis.quit().catch(() => this.#redis.disconnect());
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
      this.#whenDue(task);
    });
  }

  /** Keeps a task out of the queue for `ms` (not due yet, or not admitted now). */
  #hold(task: Task, ms: number): void {
    this.#held++;
    setTimeout(() => {
      this.#held--;
      if (this.#stopping) task.durable(false);
      else this.#enqueue(task);
    }, ms);
  }

  /** Enqueues a task once its due time has passed on this clock (timers may fire a little early). */
  #whenDue(task: Task): void {
    const wait = task.dispatch.due_at - Date.now();
    if (wait <= 0) {
      this.#enqueue(task);
      return;
    }
    this.#held++;
    setTimeout(() => {
      this.#held--;
      if (this.#stopping) task.durable(false);
      else this.#whenDue(task);
    }, wait);
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
    if (!this.#admission.admit(d.job_type, d.attempt)) {
      // The breaker is open (or slowly starting) or the retry budget is spent: not now. The task
      // waits here and asks again; it is not run, so it uses none of the job's attempts.
      this.#hold(task, ADMISSION_RETRY_MS);
      return;
    }
    const ref = { jobId: d.job_id, shard: d.shard, fence: d.fence, version: d.version };
    let claim: string;
    try {
      claim = await this.#leases.claim(ref, this.#o.workerId, this.#o.leaseMs);
    } catch (err) {
      if (isKairosError(err, 'REDIS_OOM')) {
        // Redis is out of memory: the delay tier runs those partitions from PostgreSQL, and the
        // job must not wait for memory. It runs without a lease (no reaping, no zombie check);
        // the tracker still fences its result by the job's current fence.
        this.#o.logger.warn({ jobId: d.job_id }, 'Redis out of memory: running the attempt without a lease');
        claim = 'UNLEASED';
      } else {
        // No lease, no run yet: Redis is unreachable (a restart, a failover). The task waits here
        // and claims again shortly; failing the batch instead would restart the consumer and stall
        // the partition for a rejoin.
        this.#o.logger.warn({ err, jobId: d.job_id }, 'could not claim the attempt yet; retrying');
        this.#hold(task, CLAIM_RETRY_MS);
        return;
      }
    }
    if (claim !== 'OK' && claim !== 'UNLEASED') {
      // Cancelled or rescheduled since dispatch, superseded by a newer attempt, already done, or
      // running on another worker: nothing to run here.
      this.#o.logger.info({ jobId: d.job_id, fence: d.fence, claim }, 'task discarded');
      task.durable(true);
      return;
    }
    const attempt = new AbortController();
    const onShutdown = () => attempt.abort(this.#abort.signal.reason);
    this.#abort.signal.addEventListener('abort', onShutdown, { once: true });
    const lease = new AttemptLease(ref, claim === 'OK', {
      leases: this.#leases,
      workerId: this.#o.workerId,
      leaseMs: this.#o.leaseMs,
      heartbeatMs: this.#o.heartbeatMs,
      onStop: (reason) => {
        attempt.abort(reason);
        if (reason instanceof ZombieWriteSuppressed) this.#zombie(reason);
      },
      onError: (err) => this.#o.logger.warn({ err, jobId: d.job_id }, 'lease renewal failed'),
    });
    lease.start();
    const startedAt = Date.now();
    let error: TaskResultRecord['error'] = null;
    const handler = this.#handlers.get(d.job_type);
    if (!handler) {
      error = {
        ...describeFailure(
          new PermanentError(`no handler for job type "${d.job_type}" on ${this.#o.workerId}`),
        ),
        error_class: NO_HANDLER,
      };
    } else {
      try {
        await handler(
          JSON.parse(d.payload) as unknown,
          taskContext(d, attempt.signal, () => lease.renew()),
        );
      } catch (err) {
        error = describeFailure(err);
      }
      if (!lease.stopped && !this.#abort.signal.aborted) {
        this.#admission.record(
          d.job_type,
          error !== null && (error.failure_class === 'transient' || error.failure_class === 'throttled'),
        );
      }
    }
    this.#abort.signal.removeEventListener('abort', onShutdown);
    if (this.#abort.signal.aborted && error !== null && !lease.stopped) {
      // Aborted by shutdown: no verdict on the job. The lease is released and the task delivered
      // again to the next worker.
      await lease.release(false).catch(() => undefined);
      task.durable(false);
      return;
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
      // Published even by a zombie: the tracker suppresses it (stale fence) and counts it.
      await this.#results.publish(result);
    } catch (err) {
      // Left unresolved: the task is delivered again (at least once).
      this.#o.logger.error({ err, jobId: d.job_id }, 'result not published; the task will be redelivered');
      await lease.release(false).catch(() => undefined);
      task.durable(false);
      return;
    }
    await lease
      .release(true)
      .catch((err: unknown) => this.#o.logger.warn({ err, jobId: d.job_id }, 'lease release failed'));
    task.durable(true);
  }

  /** This worker's attempt was superseded: count it and, by default, leave gracefully. */
  #zombie(err: ZombieWriteSuppressed): void {
    this.#zombies++;
    this.#o.logger.error({ err, jobId: err.jobId, fence: err.fence }, 'ZombieWriteSuppressed');
    if (this.#o.onZombie === 'shutdown' && !this.#stopping) {
      this.stop().catch((e: unknown) => this.#o.logger.error({ err: e }, 'shutdown after zombie failed'));
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
