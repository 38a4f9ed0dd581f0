import { CANARY_TYPE, LifecycleService, validTraceparent } from '@kairos/core';
import {
  AvroCodec,
  createKafka,
  createRegistryClient,
  HandoffConsumer,
  headerString,
  HEADERS,
  describeProblems,
  RecordDecoder,
  ensureServiceTopics,
  seedGroupOffsets,
  taskDispatchProblems,
  topicNames,
  type Assignment,
} from '@kairos/kafka';
import { createRedis, Leases } from '@kairos/redis';
import type { RedisClient } from '@kairos/redis';
import { SCHEMAS, type TaskDispatchRecord } from '@kairos/schemas';
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { Admission } from './admission.js';
import { Heartbeats } from './attempt-lease.js';
import { AttemptRunner } from './attempt-runner.js';
import type { PartitionWatermark } from './commit-watermark.js';
import type { Handler } from './context.js';
import type { ZombieWriteSuppressed } from './errors.js';
import { Backpressure } from './backpressure.js';
import { bufferBudgets } from './buffer-budgets.js';
import { BatchedLeases } from './lease-batches.js';
import { OffsetCommits } from './offset-commits.js';
import {
  compileWorkerOptions,
  type CompiledWorkerOptions,
  type WorkerLogger,
  type WorkerOptions,
} from './options.js';
import { ResultPublisher } from './results.js';
import { Registration } from './registration.js';
import { TaskReturns } from './returns.js';
import { TaskPool, type Task, type TaskEnd } from './task-pool.js';
import { createWorkerMetrics, NO_WORKER_METRICS, type WorkerMetrics } from './worker-metrics.js';

/**
 * @deprecated Never reported any more: a task whose type has no handler on a worker is given back
 * to its class's waiting topic (a service that handles it runs it), not failed.
 */
export const NO_HANDLER = 'NO_HANDLER';

/** How long a task whose value could not be decoded yet (registry unreachable) waits, ms. */
const DECODE_RETRY_MS = 500;

/** Least time between two offset commits, ms: the finishes of a burst share one commit. */
const COMMIT_INTERVAL_MS = 100;

/** How long stop() waits for its last offset commit, ms (the broker may be gone). */
const FINAL_COMMIT_WAIT_MS = 5_000;

/** A task taken from a partition this worker owns (or owned). */
interface TakenTask extends Task {
  readonly source: PartitionWatermark;
}

/** An attempt taken here and not ended; its copies taken meanwhile end with it. */
interface TakenAttempt {
  readonly task: TakenTask;
  readonly done: Promise<boolean>;
  readonly end: (done: boolean) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves true if `p` settles within `ms`, false otherwise. */
const within = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

/**
 * A Kairos worker. Subscribes to the task topics of its resource classes, runs the handler
 * registered for each task's job type with bounded concurrency, never before the task's due
 * time, and publishes each attempt's result. The consumer callback only hands tasks to the
 * handler pool and returns, so a long task holds back only its own slot (not the tasks behind it
 * in its partition) and a rebalance never waits for handlers. Each partition is committed up to its watermark: the first
 * task whose result is not durable yet. Too many tasks taken and not finished pause consumption.
 */
export class Worker extends LifecycleService {
  readonly #o: CompiledWorkerOptions;
  /** Canaries are answered by every worker, without user code: they prove the path, not a handler. */
  readonly #handlers = new Map<string, Handler>([[CANARY_TYPE, () => Promise.resolve()]]);
  readonly #kafka: Kafka;
  readonly #consumer: HandoffConsumer;
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  /** Per task topic: reads its values as TaskDispatch records of the current schema. */
  readonly #decoders = new Map<string, RecordDecoder<TaskDispatchRecord>>();
  readonly #redis: RedisClient;
  readonly #admission: Admission;
  readonly #metrics: WorkerMetrics;
  readonly #commits: OffsetCommits;
  readonly #pool: TaskPool<TakenTask>;
  readonly #abort = new AbortController();
  readonly #attempts = new Map<string, TakenAttempt>();
  /** Tasks taken from Kafka and not ended here, by class; pauses the topics of classes behind. */
  readonly #backpressure: Backpressure;
  readonly #classOfTopic: ReadonlyMap<string, string>;
  readonly #registration: Registration;
  #zombies = 0;
  /** stop() was called: nothing new is taken or started. */
  #stopping = false;

  constructor(options: WorkerOptions) {
    super('worker');
    this.#o = compileWorkerOptions(options);
    const o = this.#o;
    const names = topicNames(o.topicPrefix);
    const topicOf = (rc: string) => (o.serviceTopics ? names.serviceTasks(rc, o.service) : names.tasks(rc));
    this.#classOfTopic = new Map(o.resourceClasses.map((rc) => [topicOf(rc), rc]));
    const kafka = createKafka({
      brokers: o.brokers,
      clientId: `kairos-worker-${o.workerId}`,
      ssl: o.ssl,
      sasl: o.sasl,
    });
    this.#kafka = kafka;
    this.#consumer = new HandoffConsumer({
      kafka,
      groupId: o.groupId,
      sessionTimeoutMs: o.sessionTimeoutMs,
      topics: o.resourceClasses.map(topicOf),
      partitionsConsumedConcurrently: o.partitionsConsumedConcurrently,
      take: (topic, partition, messages) => this.#take(topic, partition, messages),
      onAssignment: (a) => this.#onAssignment(a),
      onRebalancing: () => this.#commitNow(),
      onCrash: (err, restart) => o.logger.error({ err, restart }, 'task consumer crashed'),
    });
    this.#producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#codec = new AvroCodec(
      createRegistryClient({ url: o.registryUrl, auth: o.registryAuth, tls: o.registryTls }),
    );
    this.#registration = new Registration({
      producer: this.#producer,
      codec: this.#codec,
      topic: topicNames(o.topicPrefix).workers,
      service: o.service,
      groupId: o.groupId,
      workerId: o.workerId,
      resourceClasses: o.resourceClasses,
      serviceTopics: o.serviceTopics,
      jobTypes: () => [...this.#handlers.keys()].filter((t) => t !== CANARY_TYPE),
      intervalMs: o.registryIntervalMs,
      logger: o.logger,
    });
    // Leases live in the delay tier's Redis; a command must not wait forever on a lost Redis.
    this.#redis = createRedis(o.redisUrl, { lazyConnect: true, ...(o.redisTls ? { tls: o.redisTls } : {}) });
    this.#redis.on('error', (err: Error) => o.logger.warn({ err }, 'redis error'));
    this.#admission = new Admission({
      breaker: o.breaker,
      retryBudget: o.retryBudget,
      onBreakerChange: (jobType, from, to) =>
        o.logger.warn({ jobType, from, to }, `circuit breaker of ${jobType} is ${to}`),
    });
    this.#commits = new OffsetCommits({
      commit: (offsets) => this.#consumer.commit(offsets),
      intervalMs: COMMIT_INTERVAL_MS,
      onError: (err) => o.logger.warn({ err }, 'offsets not committed yet; retrying'),
    });
    this.#metrics = o.metrics
      ? createWorkerMetrics(o.metrics, o.workerId, (t) => this.#handlers.has(t), {
          inFlight: () => this.#pool.running,
          slots: () => o.resourceClasses.map((rc) => [rc, this.#pool.slotsOf(rc)] as const),
          breakers: () =>
            [...this.#handlers.keys()]
              .filter((t) => t !== CANARY_TYPE)
              .map((t) => [t, this.#admission.state(t)] as const),
        })
      : NO_WORKER_METRICS;
    this.#pool = this.#createPool();
    this.#backpressure = new Backpressure({
      budgets: bufferBudgets(o.resourceClasses, o.reservedSlots, o.concurrency, o.maxBufferedTasks),
      early: (rc) => this.#pool.earlyOf(rc),
      pause: (classes) => this.#consumer.pause(classes.map(topicOf)),
      resume: (classes) => this.#consumer.resume(classes.map(topicOf)),
      logger: o.logger,
    });
  }

  #createPool(): TaskPool<TakenTask> {
    const o = this.#o;
    const runner = new AttemptRunner({
      workerId: o.workerId,
      handlers: this.#handlers,
      admission: this.#admission,
      leases: new BatchedLeases(
        new Leases(this.#redis, { keyPrefix: o.redisKeyPrefix }),
        o.workerId,
        o.leaseMs,
      ),
      heartbeats: new Heartbeats(o.heartbeatMs),
      results: new ResultPublisher(this.#producer, this.#codec, topicNames(o.topicPrefix).taskResults),
      returns: new TaskReturns(this.#producer, this.#codec, topicNames(o.topicPrefix)),
      shutdown: this.#abort.signal,
      logger: o.logger,
      onZombie: (err, log) => this.#zombie(err, log),
      metrics: this.#metrics,
    });
    return new TaskPool<TakenTask>({
      concurrency: o.concurrency,
      reservedSlots: o.reservedSlots,
      run: (task, handlerDone) => runner.run(task, handlerDone),
      onEnd: (task, end) => this.#taskEnded(task, end),
      onEarlyChange: () => this.#checkBackpressure(),
      onError: (err, task) =>
        o.logger.error(
          {
            err,
            jobId: task.dispatch.job_id,
            fence: task.dispatch.fence,
            traceparent: task.traceparent ?? undefined,
          },
          'task failed unexpectedly; retrying',
        ),
    });
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
    if (jobType === CANARY_TYPE)
      throw new RangeError(`"${CANARY_TYPE}" is Kairos's own: every worker answers it`);
    if (this.#handlers.has(jobType)) throw new RangeError(`a handler for "${jobType}" is already registered`);
    this.#handlers.set(jobType, handler as Handler);
    return this;
  }

  protected async onStart(): Promise<void> {
    await this.#redis.connect();
    await this.#producer.connect();
    // Before the first join: a new group starts where the class's other groups are (see groupId).
    const topics = [...this.#classOfTopic.keys()];
    if (this.#o.serviceTopics) {
      const created = await ensureServiceTopics(
        this.#kafka,
        this.#o.topicPrefix,
        this.#o.resourceClasses,
        this.#o.service,
      );
      if (created.length > 0) this.#o.logger.info({ topics: created }, 'service task topics created');
    }
    await seedGroupOffsets(this.#kafka, { groupId: this.#o.groupId, topics, logger: this.#o.logger });
    await this.#consumer.start();
    await this.#registration.start();
    this.#o.logger.info(
      {
        workerId: this.#o.workerId,
        service: this.#o.service,
        classes: this.#o.resourceClasses,
        groupId: this.#o.groupId,
      },
      'worker started',
    );
  }

  /**
   * Stops taking tasks, lets running handlers finish (aborting them after the timeout), commits,
   * leaves. stop() again while stopping (a zombie stopping itself, then SIGTERM) is the same stop.
   */
  protected async onStop(): Promise<void> {
    this.#stopping = true;
    try {
      this.#consumer.pause();
      // Tasks not started yet are not started now; they are delivered again after we leave.
      this.#pool.close();
      if (!(await within(this.#pool.whenIdle(), this.#o.shutdownTimeoutMs))) {
        this.#abort.abort(new Error('worker stopping'));
        // A handler that ignores its abort signal cannot hold shutdown forever.
        if (!(await within(this.#pool.whenIdle(), 5_000)))
          this.#o.logger.warn({ running: this.#pool.running }, 'handlers still running at exit');
      }
      // What finished is committed before we leave (a stopped consumer commits nothing).
      await within(this.#commits.flush().catch(this.#commitFailed), FINAL_COMMIT_WAIT_MS);
    } finally {
      this.#commits.close();
      await this.#consumer.stop().catch(() => undefined);
      await within(this.#registration.stop().catch(this.#unregisterFailed), FINAL_COMMIT_WAIT_MS);
      await this.#producer.disconnect().catch(() => undefined);
      await this.#redis.quit().catch(() => this.#redis.disconnect());
    }
    this.#o.logger.info({ workerId: this.#o.workerId }, 'worker stopped');
  }

  readonly #unregisterFailed = (err: unknown): void =>
    this.#o.logger.warn(
      { err },
      'could not say on kairos.workers that this worker stopped; it shows as not live after 3 intervals',
    );

  /** The consumer's callback: takes a batch's tasks and returns at once (they run in the pool). */
  #take(topic: string, partition: number, messages: readonly KafkaMessage[]): number {
    if (this.#stopping) return 0;
    const w = this.#commits.watermark(topic, partition);
    const rc = this.#classOfTopic.get(topic);
    if (!w || rc === undefined) return 0; // fetched before a rebalance took the partition away
    for (const message of messages) {
      // Fetched again after a rebalance that left the partition here: running or finished already.
      if (w.accept(message.offset) !== 'new') continue;
      this.#backpressure.taken(rc, +1);
      void this.#intake(w, topic, message);
    }
    this.#checkBackpressure();
    return messages.length;
  }

  /** Decodes a taken message into a task for the pool (or ends it: undecodable, left, run already). */
  async #intake(w: PartitionWatermark, topic: string, message: KafkaMessage): Promise<void> {
    const dispatch = await this.#decode(w, topic, message);
    if (dispatch === 'undecodable' || dispatch === undefined) {
      this.#ended(w, message.offset, dispatch === 'undecodable' ? 'done' : 'abandoned');
      return;
    }
    const key = `${dispatch.job_id}/${dispatch.fence}`;
    // The same attempt taken before and not ended (its partition was revoked, then came back):
    // it does not run twice; this copy ends with it, or runs if that one was left unrun.
    for (let copy = this.#attempts.get(key); copy; copy = this.#attempts.get(key)) {
      if (await copy.done) {
        this.#ended(w, message.offset, 'done');
        return;
      }
    }
    const traceparent = validTraceparent(headerString(message.headers, HEADERS.traceparent));
    const returns = Number(headerString(message.headers, HEADERS.returns) ?? 0) || 0;
    const task: TakenTask = { dispatch, source: w, offset: message.offset, traceparent, returns };
    let end: (done: boolean) => void = () => undefined;
    const done = new Promise<boolean>((r) => (end = r));
    this.#attempts.set(key, { task, done, end });
    this.#pool.submit(task);
  }

  /**
   * The task of a message; 'undecodable' if it never can be run (it does not decode, is not a
   * TaskDispatch, or has a field out of range: skipped, logged with every failing field, so the
   * partition moves on); undefined once not ours to run.
   */
  async #decode(
    w: PartitionWatermark,
    topic: string,
    message: KafkaMessage,
  ): Promise<TaskDispatchRecord | 'undecodable' | undefined> {
    const where = { topic, partition: w.partition, offset: message.offset };
    for (;;) {
      try {
        const d = await this.#decoderOf(topic).decode(message.value);
        const problems = d.ok ? taskDispatchProblems(d.record) : [];
        if (d.ok && problems.length === 0) return d.record;
        const why = d.ok ? `out of range: ${describeProblems(problems)}` : `${d.reason}: ${d.message}`;
        this.#o.logger.error({ ...where, problems }, `task skipped, it can never run (${why})`);
        return 'undecodable';
      } catch (err) {
        // The registry is unreachable (DEPENDENCY_UNAVAILABLE), or something unforeseen: not this
        // task's fault, and #intake is not awaited (a throw would end the process): decoded again shortly.
        this.#o.logger.warn({ err, ...where }, 'task not decoded yet; retrying');
      }
      await sleep(DECODE_RETRY_MS);
      if (this.#stopping || w.revoked) return undefined;
    }
  }

  #decoderOf(topic: string): RecordDecoder<TaskDispatchRecord> {
    let decoder = this.#decoders.get(topic);
    if (!decoder) {
      decoder = new RecordDecoder(this.#codec.registry, topic, SCHEMAS.taskDispatch);
      this.#decoders.set(topic, decoder);
    }
    return decoder;
  }

  #taskEnded(task: TakenTask, end: TaskEnd): void {
    const key = `${task.dispatch.job_id}/${task.dispatch.fence}`;
    const taken = this.#attempts.get(key);
    if (taken?.task === task) {
      this.#attempts.delete(key);
      taken.end(end === 'done');
    }
    this.#ended(task.source, task.offset, end);
  }

  /** A taken message is through here: done ones move their partition's watermark. */
  #ended(w: PartitionWatermark, offset: string, end: TaskEnd): void {
    const rc = this.#classOfTopic.get(w.topic);
    if (rc !== undefined) this.#backpressure.taken(rc, -1);
    if (end === 'done') this.#commits.finished(w, offset);
    this.#checkBackpressure();
  }

  /** Pauses the classes with too many tasks waiting or running (maxBufferedTasks, split like the slots). */
  #checkBackpressure(): void {
    if (!this.#stopping) this.#backpressure.check();
  }

  #onAssignment(assignment: Assignment): void {
    const revoked = this.#commits.assign(assignment);
    // Their tasks not started yet go to the next owner; running ones finish here, uncommitted.
    if (revoked.length > 0) this.#pool.purgeRevoked();
    this.#o.logger.info(
      {
        assignment: Object.fromEntries([...assignment].map(([t, ps]) => [t, [...ps]])),
        revoked: revoked.map((w) => `${w.topic}/${w.partition}`),
      },
      'worker joined its group',
    );
  }

  #commitNow(): void {
    this.#commits.flush().catch(this.#commitFailed);
  }

  readonly #commitFailed = (err: unknown): void => {
    this.#o.logger.warn({ err }, 'offsets not committed');
  };

  /** This worker's attempt was superseded: count it and, by default, leave gracefully. */
  #zombie(err: ZombieWriteSuppressed, log: WorkerLogger): void {
    this.#zombies++;
    this.#metrics.zombie();
    log.error({ err }, 'ZombieWriteSuppressed');
    if (this.#o.onZombie === 'shutdown' && !this.#stopping) {
      this.stop().catch((e: unknown) => this.#o.logger.error({ err: e }, 'shutdown after zombie failed'));
    }
  }
}
