import type { Pool } from '@kairos/db';
import type { AvroCodec, TopicNames } from '@kairos/kafka';
import type { DelayTierMetrics, Logger } from '@kairos/observability';
import type { RedisClient } from '@kairos/redis';
import type { Kafka } from 'kafkajs';
import type { HotRecord } from './record.js';

export interface DelayTierOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly redis: RedisClient;
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
  /**
   * A task waiting this long for a worker that handles its type raises `KairosTasksWaiting` (the
   * delay tier exports it as `kairos_tasks_waiting_alert_after_seconds`, the rule compares), ms.
   * Default: 300,000 (5 min).
   */
  readonly waitingAlertAfterMs?: number;
}

export function checkOptions(o: DelayTierOptions): void {
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
  int('waitingAlertAfterMs', o.waitingAlertAfterMs, 1000);
  int('versionTtlSeconds', o.versionTtlSeconds, 60);
  for (const [tenant, w] of o.tenantWeights ?? []) int(`tenantWeights.${tenant}`, w, 1);
  if (o.recoverBelow !== undefined && !(o.recoverBelow > 0 && o.recoverBelow <= 1))
    throw new RangeError(`DelayTier option recoverBelow must be in (0, 1], got ${o.recoverBelow}`);
  if (o.resourceClasses?.length === 0)
    throw new RangeError('DelayTier option resourceClasses must not be empty');
}
