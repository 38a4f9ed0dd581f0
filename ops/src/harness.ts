import { randomBytes } from 'node:crypto';
import { createApiServer, defaultConsoleDir } from '@kairos/api';
import {
  JobCommands,
  Replays,
  ScheduleCommands,
  type JobCommandsOptions,
  type ScheduleCommandsOptions,
} from '@kairos/commands';
import { compileJobLimits } from '@kairos/core';
import { createPool, publishOutboxAfterCommit, type Pool } from '@kairos/db';
import { DelayTier, type DelayTierOptions, type HotRecord } from '@kairos/delay-tier';
import {
  AvroCodec,
  consumerGroups,
  createKafka,
  createRegistryClient,
  startOutboxRelay,
  topicNames,
  type TopicNames,
} from '@kairos/kafka';
import { createRedis, HotSet, Leases } from '@kairos/redis';
import { createLogger, type Logger } from '@kairos/observability';
import { Tracker, type TrackerOptions } from '@kairos/tracker';
import { Worker, type WorkerOptions } from '@kairos/worker-sdk';
import type { FastifyInstance } from 'fastify';
import type { Kafka, Producer } from 'kafkajs';
import { createAdminKey } from './api-keys.js';
import { prepareNamespace, runStops, type NamespaceSpec } from './namespace-setup.js';

export type { HarnessServices } from './namespace-setup.js';

export interface HarnessOptions extends NamespaceSpec {
  /** pino level of the components. Default: warn. */
  readonly logLevel?: string;
  /** Serve the HTTP API on a random loopback port. Default: true. */
  readonly api?: boolean;
  /** The console's built files the API serves. Default: apps/console/dist (see defaultConsoleDir). */
  readonly consoleDir?: string;
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  readonly onScheduled?: (record: HotRecord, atMs: number) => void;
  /** Delay-tier settings beyond the defaults (window, pre-dispatch, weights, ...). */
  readonly delayTier?: Partial<
    Omit<DelayTierOptions, 'kafka' | 'codec' | 'redis' | 'pool' | 'topics' | 'instanceId' | 'groupId'>
  >;
  /** Recurring schedules: the commands' settings (tolerance, generation, backfill). */
  readonly schedules?: Pick<
    ScheduleCommandsOptions,
    'misfireToleranceMs' | 'generation' | 'backfill' | 'now'
  >;
  /** The tracker's schedule generator (interval, lookahead…; false: none). */
  readonly generator?: TrackerOptions['generator'];
  /** Job events also sent straight after commit, as the apps do (KAIROS_OUTBOX_RELAY). Default: true. */
  readonly outboxRelay?: boolean;
  /** Group commit of single creates. Default: the commands' (2 ms, 100). */
  readonly createGroup?: JobCommandsOptions['createGroup'];
  /** The tracker's canary (interval, stall time, notifier); its rows go through Debezium only. Default: none. */
  readonly canary?: Omit<NonNullable<TrackerOptions['canary']>, 'jobs'>;
  /** The tracker's reconciliation watchdog (interval, grace, timeouts…). Default: none. */
  readonly watchdog?: Omit<NonNullable<TrackerOptions['watchdog']>, 'hot' | 'leases' | 'producer' | 'shards'>;
  /** The tracker follows the outbox connector's heartbeats (outbox lag). Default: no. */
  readonly outboxHeartbeat?: TrackerOptions['outboxHeartbeat'];
  /** The tracker's job gauges and forecast (interval). Default: none. */
  readonly gauges?: Omit<NonNullable<TrackerOptions['gauges']>, 'shards'>;
  /** The tracker's SLA check of schedules (interval, notifier; false: none). Default: its defaults. */
  readonly scheduleSla?: TrackerOptions['scheduleSla'];
}

/**
 * The whole pipeline of DESIGN.md section 1 in this process, isolated in one namespace: its own
 * schema (migrated), the production outbox connector re-pointed at it, topics under its prefix,
 * and the API, delay tier and tracker. Tests and benchmarks both run on it; `stop()` undoes
 * everything it started, `destroy()` also removes the namespace's data.
 */
export class InProcessPipeline {
  readonly #stops: (() => Promise<void>)[] = [];
  readonly #o: HarnessOptions;
  /** Creates the canaries when the tracker runs one (on a pool of their own). */
  #canaryJobs: JobCommands | undefined;
  /** Sends the watchdog's lost-attempt results when the tracker runs one. */
  #producer: Producer | undefined;
  readonly kafka: Kafka;
  readonly topics: TopicNames;
  pool!: Pool;
  codec!: AvroCodec;
  commands!: JobCommands;
  schedules!: ScheduleCommands;
  api: FastifyInstance | undefined;
  apiUrl = '';
  /** An admin key of every tenant for this namespace's API (`Authorization: Bearer …`). */
  apiKey = '';
  delayTier!: DelayTier;
  tracker!: Tracker;

  private constructor(o: HarnessOptions) {
    this.#o = o;
    this.kafka = createKafka({ brokers: o.services.kafkaBrokers.split(','), clientId: `kairos-${o.id}` });
    this.topics = topicNames(o.prefix);
  }

  static async start(o: HarnessOptions): Promise<InProcessPipeline> {
    const p = new InProcessPipeline(o);
    try {
      await p.#start();
    } catch (err) {
      await p.stop().catch(() => undefined);
      throw err;
    }
    return p;
  }

  #log(component: string): Logger {
    return createLogger({ component, level: this.#o.logLevel ?? 'warn' });
  }

  async #start(): Promise<void> {
    const { services, resourceClasses } = this.#o;
    this.pool = await prepareNamespace(this.#o, this.kafka, this.#stops);
    const relay = await startOutboxRelay(this.kafka, this.topics, {
      outboxRelay: this.#o.outboxRelay ?? true,
      jobEventPartitions: services.jobEventPartitions,
    });
    publishOutboxAfterCommit(this.pool, relay);
    // Stopped after every component (stops run newest first), before the pool ends.
    this.#stops.push(async () => {
      publishOutboxAfterCommit(this.pool, undefined);
      await relay?.stop();
    });
    const registry = createRegistryClient({ url: services.registryUrl });
    this.codec = new AvroCodec(registry);
    if (this.#o.canary) {
      // As the tracker app does: canaries on a pool that does not relay, so Debezium carries them.
      const canaryPool = createPool({ connectionString: services.pgUrl, schema: this.#o.schema, max: 1 });
      this.#stops.push(() => canaryPool.end());
      this.#canaryJobs = new JobCommands({
        pool: canaryPool,
        codec: this.codec,
        jobEventsTopic: this.topics.jobEvents,
        jobEventPartitions: services.jobEventPartitions,
        limits: compileJobLimits({ resourceClasses }),
      });
    }
    this.commands = new JobCommands({
      pool: this.pool,
      codec: this.codec,
      jobEventsTopic: this.topics.jobEvents,
      jobEventPartitions: services.jobEventPartitions,
      limits: compileJobLimits({ resourceClasses }),
      ...(this.#o.createGroup ? { createGroup: this.#o.createGroup } : {}),
    });
    this.schedules = new ScheduleCommands({
      pool: this.pool,
      codec: this.codec,
      jobEventsTopic: this.topics.jobEvents,
      jobEventPartitions: services.jobEventPartitions,
      limits: compileJobLimits({ resourceClasses }),
      ...this.#o.schedules,
      ...(this.#o.generator
        ? { generation: { ...this.#o.schedules?.generation, ...this.#o.generator.settings } }
        : {}),
    });
    if (this.#o.api ?? true) {
      this.apiKey = await createAdminKey(this.pool, 'harness');
      const replays = new Replays({ pool: this.pool, jobs: this.commands, instanceId: `api-${this.#o.id}` });
      await replays.start();
      this.#stops.push(() => replays.stop());
      const api = await createApiServer({
        commands: this.commands,
        schedules: this.schedules,
        replays,
        pool: this.pool,
        log: this.#log('api'),
        // The harness names its groups `<prefix>delay-tier`, `<prefix>tracker`: all of the namespace.
        status: {
          pool: this.pool,
          kafka: this.kafka,
          registry,
          groupPrefix: this.#o.prefix,
          topicPrefix: this.#o.prefix,
        },
        consoleDir: this.#o.consoleDir ?? defaultConsoleDir(),
        // The overview judges canaries by the tracker's settings; none run without one.
        canary: {
          intervalMs: this.#o.canary ? (this.#o.canary.intervalMs ?? 60_000) : 0,
          stallMs: this.#o.canary?.stallMs ?? 120_000,
        },
      });
      this.api = api;
      this.apiUrl = await api.listen({ host: '127.0.0.1', port: 0 });
      this.#stops.push(() => api.close());
    }
    this.delayTier = this.newDelayTier();
    await this.delayTier.start();
    if (this.#o.watchdog) {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      this.#stops.push(() => producer.disconnect());
      this.#producer = producer;
    }
    this.tracker = this.newTracker();
    await this.tracker.start();
  }

  /**
   * A delay-tier instance of this namespace (the same group and Redis keys), not started yet;
   * stop() stops it (tests stop one and start another to simulate a restart).
   */
  newDelayTier(): DelayTier {
    const { services, prefix, resourceClasses } = this.#o;
    const instanceId = `delay-tier-${randomBytes(2).toString('hex')}`;
    // Named, so a test can tell the tier's Redis traffic from everyone else's (CLIENT LIST).
    const redis = createRedis(services.redisUrl, {
      keyPrefix: prefix,
      connectionName: `${prefix}${instanceId}`,
    });
    const tier = new DelayTier({
      kafka: this.kafka,
      codec: this.codec,
      redis,
      pool: this.pool,
      topics: this.topics,
      instanceId,
      groupId: `${prefix}delay-tier`,
      log: this.#log('delay-tier'),
      resourceClasses,
      ...this.#o.delayTier,
      ...(this.#o.onDispatched ? { onDispatched: this.#o.onDispatched } : {}),
      ...(this.#o.onScheduled ? { onScheduled: this.#o.onScheduled } : {}),
    });
    this.#stops.push(async () => void (await redis.quit()));
    this.#stops.push(() => tier.stop());
    return tier;
  }

  /** A tracker of this namespace (with the schedule generator unless turned off), not started yet. */
  newTracker(): Tracker {
    const tracker = new Tracker({
      kafka: this.kafka,
      codec: this.codec,
      pool: this.pool,
      topics: this.topics,
      resourceClasses: this.#o.resourceClasses,
      groupId: `${this.#o.prefix}tracker`,
      log: this.#log('tracker'),
      ...(this.#o.generator === undefined ? {} : { generator: this.#o.generator }),
      ...(this.#o.scheduleSla === undefined ? {} : { scheduleSla: this.#o.scheduleSla }),
      ...(this.#canaryJobs && this.#o.canary && { canary: { ...this.#o.canary, jobs: this.#canaryJobs } }),
      ...(this.#o.watchdog && { watchdog: this.#watchdogParts(this.#o.watchdog) }),
      ...(this.#o.outboxHeartbeat && { outboxHeartbeat: this.#o.outboxHeartbeat }),
      ...(this.#o.gauges && {
        gauges: {
          shards: this.#o.services.jobEventPartitions,
          consumerGroups: () => consumerGroups(this.kafka, this.#o.prefix),
          ...this.#o.gauges,
        },
      }),
    });
    this.#stops.push(() => tracker.stop());
    return tracker;
  }

  /** The watchdog's Redis readers and result producer, as the tracker app builds them. */
  #watchdogParts(options: NonNullable<HarnessOptions['watchdog']>): NonNullable<TrackerOptions['watchdog']> {
    const redis = createRedis(this.#o.services.redisUrl, { keyPrefix: this.#o.prefix });
    this.#stops.push(async () => void (await redis.quit()));
    return {
      ...options,
      hot: new HotSet(redis),
      leases: new Leases(redis),
      producer: this.#producer,
      shards: this.#o.services.jobEventPartitions,
    };
  }

  /** A worker on this namespace's task topics (stopped by stop() if still running). */
  worker(options: Partial<WorkerOptions> = {}): Worker {
    const w = new Worker({
      brokers: this.#o.services.kafkaBrokers.split(','),
      registryUrl: this.#o.services.registryUrl,
      resourceClasses: this.#o.resourceClasses,
      topicPrefix: this.#o.prefix,
      redisUrl: this.#o.services.redisUrl,
      redisKeyPrefix: this.#o.prefix,
      concurrency: 50,
      logger: this.#log('worker'),
      ...options,
    });
    this.#stops.push(() => w.stop());
    return w;
  }

  /** Stops everything started, newest first; keeps going past failures and reports the first. */
  stop(): Promise<void> {
    return runStops(this.#stops);
  }
}
