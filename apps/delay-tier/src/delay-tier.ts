import type { Pool } from '@kairos/db';
import { groupMemberConfig, type AvroCodec, type TopicNames } from '@kairos/kafka';
import {
  createDelayTierMetrics,
  silentLogger,
  type DelayTierMetrics,
  type Logger,
} from '@kairos/observability';
import { HotSet, Leases, RateLimiter } from '@kairos/redis';
import type { Redis } from 'ioredis';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import type { TierAdmin } from './admin.js';
import { Dispatcher } from './dispatcher.js';
import { applyJobEvent } from './event-applier.js';
import { Hydrator } from './hydrator.js';
import { Lookahead } from './lookahead.js';
import { OccurrenceGate } from './occurrence-gate.js';
import { Ownership } from './ownership.js';
import { PartitionModes } from './partition-modes.js';
import { Preloader } from './preloader.js';
import { Reaper } from './reaper.js';
import type { HotRecord } from './record.js';
import { RecentEvents } from './recent-events.js';
import { Release } from './release.js';
import { TaskMessages } from './task-messages.js';
import { tierAdmin } from './tier-admin.js';

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
  /**
   * Kafka session timeout, ms: a killed owner's partitions move to a standby this long after its
   * last heartbeat (then the standby takes new epochs and rebuilds their hot sets). Default: 6,000.
   */
  readonly sessionTimeoutMs?: number;
  /** Prefix of every Redis key. Default: ''. */
  readonly keyPrefix?: string;
  /** Resource classes, released `critical` first. Default: critical, default, cpu, io. */
  readonly resourceClasses?: readonly string[];
  /** Most jobs popped per class per partition per round. Default: 500. */
  readonly batchSize?: number;
  /**
   * The dispatcher sleeps until its partitions' next deadline (earliest due job, rate-limit
   * refill, in-flight reclaim) or an event; this is the longest it goes without visiting a
   * partition, ms: the safety net for a change nothing announces (a rate limit raised by another
   * instance, Redis losing its data while no event arrives). Default: 1,000.
   */
  readonly maxSleepMs?: number;
  /**
   * How often a partition in PostgreSQL-only mode (Redis out of memory) is polled for due jobs,
   * ms: it has no hot set to compute a deadline from. Bounds its lateness. Default: 20.
   */
  readonly fallbackPollMs?: number;
  /**
   * PostgreSQL-only partitions (Redis out of memory) dispatched at once in a round; each holds a
   * PostgreSQL connection while it reads, produces and commits, so keep it below the pool's size.
   * Hot partitions are always dispatched together, in one claim per task topic. Default: 1.
   */
  readonly dispatchConcurrency?: number;
  /** Jobs due within this window live in Redis, later ones only in PostgreSQL. Default: 60 min. */
  readonly lookaheadMs?: number;
  /** The window under Redis memory pressure. Default: 60 s. */
  readonly minLookaheadMs?: number;
  /** How often the pre-loader tops up the hot sets while it finds work, ms. Default: 1,000. */
  readonly preloadIntervalMs?: number;
  /**
   * Idle, the pre-loader's pause doubles up to this, ms (never past a quarter of the window left
   * after the pre-dispatch lead, nor the fallback probe interval while a partition runs
   * PostgreSQL-only). Events bring in every job due within the window themselves; the pre-loader
   * only moves the horizon, so a job 60 min away may come in seconds later. The hot-set gauges
   * (size, oldest due age) are refreshed at this pace too. Default: 10,000.
   */
  readonly preloadMaxIntervalMs?: number;
  /** Rows per pre-loader page. Default: 1,000. */
  readonly preloadPageSize?: number;
  /** Release jobs this long before due (workers hold them until due). Default: 0 (off). */
  readonly preDispatchMs?: number;
  /** Jobs per tenant per round-robin pass at weight 1. Default: 16. */
  readonly tenantQuantum?: number;
  /** Tenants released with more weight than 1 (jobs per pass = quantum × weight). Default: none. */
  readonly tenantWeights?: ReadonlyMap<string, number>;
  /** How often a PostgreSQL-only partition checks Redis memory, ms. Default: 5,000. */
  readonly fallbackProbeMs?: number;
  /**
   * How long a job's version marker (and its attempt record) stays in Redis after its last
   * change, s. Markers spare the work of a replayed or stale event; PostgreSQL's version check is
   * what keeps it correct, so a shorter time only costs work. ~100 B per job. Default: 7 days.
   */
  readonly versionTtlSeconds?: number;
  /** Leave PostgreSQL-only mode once Redis uses less than this share of maxmemory. Default: 0.8. */
  readonly recoverBelow?: number;
  /** How often expired leases of running attempts are reaped, ms. Default: 1,000. */
  readonly reapIntervalMs?: number;
  /** Called for every attempt whose lease expired (tests, metrics). */
  readonly onReaped?: (jobId: string, fence: number) => void;
  /** Prometheus metrics. Default: a new registry. */
  readonly metrics?: DelayTierMetrics;
  readonly log?: Logger;
  /** Called when the Kafka consumer crashed for good (the app should exit and be restarted). */
  readonly onFatal?: (err: Error) => void;
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  /** Called for every job that expired (its deadline passed) instead of being dispatched. */
  readonly onExpired?: (record: HotRecord) => void;
  /** Called when a job enters the hot set from an event (benchmarks, tests). */
  readonly onScheduled?: (record: HotRecord, atMs: number) => void;
  /**
   * A run of a schedule waiting behind its previous run (overlap buffer_one) is looked at again
   * after this, ms. Default: 500.
   */
  readonly overlapRecheckMs?: number;
}

function checkOptions(o: DelayTierOptions): void {
  const int = (name: string, v: number | undefined, min: number) => {
    if (v !== undefined && !(Number.isInteger(v) && v >= min))
      throw new RangeError(`DelayTier option ${name} must be an integer >= ${min}, got ${v}`);
  };
  int('batchSize', o.batchSize, 1);
  int('maxSleepMs', o.maxSleepMs, 10);
  int('fallbackPollMs', o.fallbackPollMs, 1);
  int('dispatchConcurrency', o.dispatchConcurrency, 1);
  int('lookaheadMs', o.lookaheadMs, 1000);
  int('minLookaheadMs', o.minLookaheadMs, 1000);
  int('preloadIntervalMs', o.preloadIntervalMs, 10);
  int('preloadMaxIntervalMs', o.preloadMaxIntervalMs, 10);
  if (o.preloadMaxIntervalMs !== undefined && o.preloadMaxIntervalMs < (o.preloadIntervalMs ?? 1000))
    throw new RangeError('DelayTier option preloadMaxIntervalMs must be >= preloadIntervalMs');
  int('preloadPageSize', o.preloadPageSize, 1);
  int('preDispatchMs', o.preDispatchMs, 0);
  int('tenantQuantum', o.tenantQuantum, 1);
  int('fallbackProbeMs', o.fallbackProbeMs, 10);
  int('reapIntervalMs', o.reapIntervalMs, 10);
  int('overlapRecheckMs', o.overlapRecheckMs, 10);
  int('versionTtlSeconds', o.versionTtlSeconds, 60);
  for (const [tenant, w] of o.tenantWeights ?? []) int(`tenantWeights.${tenant}`, w, 1);
  if (o.recoverBelow !== undefined && !(o.recoverBelow > 0 && o.recoverBelow <= 1))
    throw new RangeError(`DelayTier option recoverBelow must be in (0, 1], got ${o.recoverBelow}`);
  if (o.resourceClasses?.length === 0)
    throw new RangeError('DelayTier option resourceClasses must not be empty');
}

/** Events applied concurrently within a batch; versions make their order irrelevant. */
const APPLY_CHUNK = 200;

/**
 * The delay tier: one member of the consumer group on kairos.job-events. Each owned partition's
 * events feed its Redis hot set (jobs within the lookahead window; a pre-loader brings later ones
 * in as they approach); a dispatcher releases due jobs on Redis time to `kairos.tasks.<class>`.
 * Under Redis memory pressure a partition runs from PostgreSQL alone until Redis recovers.
 */
export class DelayTier {
  readonly #o: DelayTierOptions;
  readonly #log: Logger;
  readonly #hot: HotSet;
  readonly #limiter: RateLimiter;
  readonly #release: Release;
  readonly #lookahead: Lookahead;
  readonly #modes: PartitionModes;
  readonly #hydrator: Hydrator;
  readonly #ownership: Ownership;
  readonly #preloader: Preloader;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #dispatcher: Dispatcher;
  readonly #reaper: Reaper;
  readonly #leases: Leases;
  readonly metrics: DelayTierMetrics;

  constructor(options: DelayTierOptions) {
    checkOptions(options);
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.metrics = options.metrics ?? createDelayTierMetrics();
    const keyPrefix = options.keyPrefix ?? '';
    const batchSize = options.batchSize ?? 500;
    const ttl =
      options.versionTtlSeconds === undefined ? {} : { versionTtlSeconds: options.versionTtlSeconds };
    this.#hot = new HotSet(options.redis, { keyPrefix, ...ttl });
    this.#limiter = new RateLimiter(options.redis, { keyPrefix });
    this.#release = new Release(
      this.#limiter,
      options.resourceClasses ?? ['critical', 'default', 'cpu', 'io'],
      batchSize,
    );
    this.#lookahead = new Lookahead(options.lookaheadMs ?? 3_600_000, options.minLookaheadMs ?? 60_000);
    this.metrics.lookahead.set(this.#lookahead.effectiveMs / 1000);
    this.#modes = new PartitionModes((partition, fallback) => {
      this.metrics.fallback.set({ partition: String(partition) }, fallback ? 1 : 0);
      if (fallback) this.#lookahead.shrink();
      else if (this.#modes.fallbackPartitions().length === 0) this.#lookahead.restore();
      this.metrics.lookahead.set(this.#lookahead.effectiveMs / 1000);
      this.#preloader.nudge();
      this.#dispatcher.refresh(partition);
    });
    this.#hydrator = new Hydrator(options.pool, this.#hot, options.preloadPageSize ?? 1000);
    const onOom = (partition: number) => {
      if (this.#modes.enterFallback(partition)) {
        this.#log.warn({ partition }, 'Redis refused a write (maxmemory): partition runs PostgreSQL-only');
      }
    };
    this.#ownership = new Ownership(options.pool, this.#hot, options.instanceId, this.#log, {
      rebuild: async (partition, epoch) => {
        const t0 = Date.now();
        this.#hydrator.reset(partition);
        const windowMs = this.#lookahead.effectiveMs;
        const added = await this.#hydrator.run(partition, epoch, windowMs);
        this.#preloader.rebuilt(partition, windowMs);
        this.metrics.hydrated.inc({ partition: String(partition) }, added);
        if (added > 0) this.#log.info({ partition, epoch, added, ms: Date.now() - t0 }, 'hot set rebuilt');
      },
      onOom,
      onEpoch: (partition) => this.metrics.epochChanges.inc({ partition: String(partition) }),
      onReady: (partition) => this.#dispatcher.refresh(partition),
      onRevoked: (partition) => {
        this.#dispatcher.forget(partition);
        this.#modes.forget(partition);
        this.#hydrator.forget(partition);
        this.#preloader.forget(partition);
        this.metrics.forgetPartition(partition);
      },
    });
    this.#preloader = new Preloader({
      redis: options.redis,
      hot: this.#hot,
      hydrator: this.#hydrator,
      ownership: this.#ownership,
      modes: this.#modes,
      lookahead: this.#lookahead,
      log: this.#log,
      intervalMs: options.preloadIntervalMs ?? 1000,
      maxIntervalMs: Math.max(options.preloadMaxIntervalMs ?? 10_000, options.preloadIntervalMs ?? 1000),
      leadMs: options.preDispatchMs ?? 0,
      probeMs: options.fallbackProbeMs ?? 5000,
      recoverBelow: options.recoverBelow ?? 0.8,
      onOom,
      onHydrated: (partition, n) => {
        this.metrics.hydrated.inc({ partition: String(partition) }, n);
        // Jobs came in from PostgreSQL: one may be due before the partition's planned visit.
        if (n > 0) this.#dispatcher.refresh(partition);
      },
      onRound: (partitions) => this.#observe(partitions),
    });
    this.#leases = new Leases(options.redis, {
      keyPrefix,
      ...(options.versionTtlSeconds === undefined ? {} : { attemptTtlSeconds: options.versionTtlSeconds }),
    });
    this.#producer = options.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#reaper = new Reaper({
      leases: this.#leases,
      ownership: this.#ownership,
      modes: this.#modes,
      pool: options.pool,
      codec: options.codec,
      producer: this.#producer,
      taskResultsTopic: options.topics.taskResults,
      log: this.#log,
      intervalMs: options.reapIntervalMs ?? 1000,
      batch: 200,
      ...(options.onReaped ? { onReaped: options.onReaped } : {}),
    });
    this.#consumer = options.kafka.consumer(
      groupMemberConfig({
        groupId: options.groupId ?? 'kairos-delay-tier',
        ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
      }),
    );
    this.#dispatcher = new Dispatcher({
      hot: this.#hot,
      ownership: this.#ownership,
      modes: this.#modes,
      release: this.#release,
      pool: options.pool,
      producer: this.#producer,
      messages: new TaskMessages(options.codec, options.topics),
      gate: new OccurrenceGate({
        codec: options.codec,
        jobEventsTopic: options.topics.jobEvents,
        recheckMs: options.overlapRecheckMs ?? 500,
      }),
      log: this.#log,
      batchSize,
      maxSleepMs: options.maxSleepMs ?? 1000,
      fallbackPollMs: options.fallbackPollMs ?? 20,
      concurrency: options.dispatchConcurrency ?? 1,
      preDispatchMs: options.preDispatchMs ?? 0,
      quantum: options.tenantQuantum ?? 16,
      tenantWeights: options.tenantWeights ?? new Map(),
      onOom,
      onDispatched: (record, atMs) => {
        this.metrics.dispatched.inc({ resource_class: record.resource_class });
        this.metrics.dispatchLag.observe(
          record.resource_class,
          record.tenant_id,
          (atMs - record.due_at) / 1000,
        );
        this.#o.onDispatched?.(record, atMs);
      },
      onExpired: (record) => {
        this.metrics.expired.inc();
        this.#o.onExpired?.(record);
      },
    });
  }

  /** Leases of running attempts in this tier's Redis. */
  get leases(): Leases {
    return this.#leases;
  }

  get hotSet(): HotSet {
    return this.#hot;
  }

  get rateLimiter(): RateLimiter {
    return this.#limiter;
  }

  ownedPartitions(): number[] {
    return this.#ownership.owned();
  }

  /** Partitions running PostgreSQL-only (Redis out of memory). */
  fallbackPartitions(): number[] {
    return this.#modes.fallbackPartitions();
  }

  /** The operations surface: window, rate limits, per-partition status. */
  admin(): TierAdmin {
    return tierAdmin({
      lookahead: this.#lookahead,
      limiter: this.#limiter,
      release: this.#release,
      ownership: this.#ownership,
      modes: this.#modes,
      hot: this.#hot,
      onWindowChange: () => {
        this.metrics.lookahead.set(this.#lookahead.effectiveMs / 1000);
        this.#preloader.nudge();
      },
      onLimitsChange: () => this.#dispatcher.refresh(),
    });
  }

  async #observe(partitions: readonly number[]): Promise<void> {
    const now = await this.#hot.serverTimeMs();
    for (const p of partitions) {
      const s = await this.#hot.stats(p);
      this.metrics.hotSetSize.set({ partition: String(p) }, s.jobs);
      this.metrics.oldestDueAge.set(
        { partition: String(p) },
        s.oldestDueMs === undefined ? 0 : Math.max(0, now - s.oldestDueMs) / 1000,
      );
    }
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
    this.#consumer.on(this.#consumer.events.REBALANCING, () => this.#ownership.suspend());
    this.#consumer.on(this.#consumer.events.GROUP_JOIN, (e) => {
      const partitions = e.payload.memberAssignment[topic] ?? [];
      this.#ownership.assign(partitions);
      // The rebalance is over: every partition still ours may dispatch again.
      this.#dispatcher.refresh();
      // Partitions paused after losing them to another owner are ours again to read.
      this.#consumer.resume([{ topic, partitions }]);
      this.#log.info({ partitions }, 'owning job-events partitions');
    });
    await this.#consumer.subscribe({ topic, fromBeginning: true });
    const deps = {
      recent: new RecentEvents(),
      codec: this.#o.codec,
      hot: this.#hot,
      ownership: this.#ownership,
      modes: this.#modes,
      log: this.#log,
      windowMs: () => this.#lookahead.effectiveMs,
      onOom: (partition: number) => {
        if (this.#modes.enterFallback(partition)) {
          this.#log.warn({ partition }, 'Redis refused a write (maxmemory): partition runs PostgreSQL-only');
        }
      },
      onScheduled: (record: HotRecord, atMs: number) => {
        // Due before the dispatcher's planned visit of its partition (due now, or a late event,
        // or simply sooner than anything else there): it wakes for it.
        this.#dispatcher.scheduled(record.shard, record.due_at);
        this.#o.onScheduled?.(record, atMs);
      },
    };
    await this.#consumer.run({
      eachBatchAutoResolve: false,
      // Partitions are independent (own hot set, own epoch): apply their batches in parallel.
      partitionsConsumedConcurrently: 8,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
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
    this.#preloader.start();
    this.#reaper.start();
  }

  async stop(): Promise<void> {
    await this.#reaper.stop();
    await this.#preloader.stop();
    await this.#dispatcher.stop();
    await this.#ownership.recovered();
    await this.#consumer.disconnect();
    await this.#producer.disconnect();
  }
}
