import { Lifecycle, type Service } from '@kairos/core';
import { DeadRecords, RecordDecoder } from '@kairos/kafka';
import type { DelayTierMetrics, Logger } from '@kairos/observability';
import { HotSet, Leases, RateLimiter } from '@kairos/redis';
import { SCHEMAS } from '@kairos/schemas';
import type { Producer } from 'kafkajs';
import { restoreAttempts } from './attempt-restore.js';
import type { DelayTierOptions } from './delay-tier-options.js';
import { DispatchLanes } from './dispatch-lanes.js';
import { Hydrator } from './hydrator.js';
import { LagHistory } from './lag-history.js';
import { JobEventsConsumer } from './job-events-consumer.js';
import { Lookahead } from './lookahead.js';
import { Notifications, type PartitionNotices } from './notifications.js';
import { OccurrenceGate } from './occurrence-gate.js';
import { Ownership } from './ownership.js';
import { fallBackOnOom, OwnershipGuard } from './ownership-guard.js';
import { PartitionModes } from './partition-modes.js';
import { PostgresOnlyMarks } from './postgres-only-marks.js';
import { Preloader } from './preloader.js';
import { Reaper } from './reaper.js';
import { RecentEvents } from './recent-events.js';
import { Release } from './release.js';
import { TaskMessages, type Routes } from './task-messages.js';
import { WaitingRouter } from './waiting-router.js';
import { WorkerRoutes } from './worker-routes.js';

/** The tier's parts, and its services in start order (each uses those before it). */
export interface Tier extends PartitionState {
  readonly leases: Leases;
  readonly dispatcher: DispatchLanes;
  readonly preloader: Preloader;
  readonly services: readonly Service[];
}

/** What every loop of the tier builds on: Redis state, policy, and who owns which partition. */
interface PartitionState {
  readonly hot: HotSet;
  readonly limiter: RateLimiter;
  readonly release: Release;
  readonly lookahead: Lookahead;
  readonly modes: PartitionModes;
  readonly hydrator: Hydrator;
  readonly ownership: Ownership;
  readonly guard: OwnershipGuard;
}

interface Context {
  readonly o: DelayTierOptions;
  readonly log: Logger;
  readonly metrics: DelayTierMetrics;
  readonly notices: Notifications<PartitionNotices>;
  /** Dispatch lag per minute and class in PostgreSQL (the console's chart). */
  readonly lagHistory: LagHistory;
}

/**
 * Builds the delay tier in dependency order: partition state first, then the loops that act on
 * partitions (dispatcher, pre-loader, reaper), then the job-events consumer that feeds them.
 * What an earlier part announces to later ones (a partition ready, revoked, or changing mode)
 * goes through one notification hub, wired last, here.
 */
export function composeTier(o: DelayTierOptions, log: Logger, metrics: DelayTierMetrics): Tier {
  const lagHistory = new LagHistory({ pool: o.pool, instanceId: o.instanceId, log });
  const cx: Context = { o, log, metrics, notices: new Notifications<PartitionNotices>(), lagHistory };
  const state = partitionState(cx);
  const marks = new PostgresOnlyMarks(o.pool, state.ownership, log);
  const producer = o.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const routes = new WorkerRoutes({ kafka: o.kafka, codec: o.codec, topic: o.topics.workers, log });
  const dispatcher = newDispatcher(cx, state, producer, () => routes.table());
  const preloader = newPreloader(cx, state, dispatcher);
  const leases = new Leases(o.redis, {
    keyPrefix: o.keyPrefix ?? '',
    ...(o.versionTtlSeconds === undefined ? {} : { attemptTtlSeconds: o.versionTtlSeconds }),
  });
  const reaper = new Reaper({
    ownership: state.ownership,
    modes: state.modes,
    guard: state.guard,
    leases,
    pool: o.pool,
    codec: o.codec,
    producer,
    taskResultsTopic: o.topics.taskResults,
    log,
    intervalMs: o.reapIntervalMs ?? 1000,
    batch: 200,
    ...(o.onReaped ? { onReaped: o.onReaped } : {}),
  });
  const events = newEventsConsumer(cx, state, dispatcher);
  const waiting = new WaitingRouter({
    kafka: o.kafka,
    codec: o.codec,
    producer,
    topics: o.topics,
    resourceClasses: o.resourceClasses ?? ['critical', 'default', 'cpu', 'io'],
    groupId: `${o.groupId ?? 'kairos-delay-tier'}-waiting`,
    routes: () => routes.table(),
    registry: metrics.registry,
    alertAfterMs: o.waitingAlertAfterMs ?? 300_000,
    log,
  });
  wireNotices(cx, state, dispatcher, preloader);
  cx.notices.on('modeChanged', (partition, fallback) => marks.changed(partition, fallback));
  const services: Service[] = [
    new Lifecycle('partition mode marks', { start: () => undefined, stop: () => marks.stop() }),
    // Stopped after the dispatcher: its last dispatches are written.
    lagHistory,
    new Lifecycle('task producer', { start: () => producer.connect(), stop: () => producer.disconnect() }),
    // Before anything dispatches: tasks are routed by which live workers handle their types.
    routes,
    events,
    // Stopped after the loops: a partition's recovery under way finishes before Kafka goes.
    new Lifecycle('partition recoveries', {
      start: () => undefined,
      stop: () => state.ownership.recovered(),
    }),
    dispatcher,
    preloader,
    reaper,
    waiting,
  ];
  return { ...state, leases, dispatcher, preloader, services };
}

function partitionState({ o, log, metrics, notices }: Context): PartitionState {
  const keyPrefix = o.keyPrefix ?? '';
  const ttl = o.versionTtlSeconds === undefined ? {} : { versionTtlSeconds: o.versionTtlSeconds };
  const hot = new HotSet(o.redis, { keyPrefix, ...ttl });
  const limiter = new RateLimiter(o.redis, { keyPrefix });
  const classes = o.resourceClasses ?? ['critical', 'default', 'cpu', 'io'];
  const release = new Release(limiter, classes, o.batchSize ?? 500);
  const lookahead = new Lookahead(o.lookaheadMs ?? 3_600_000, o.minLookaheadMs ?? 60_000);
  metrics.lookahead.set(lookahead.effectiveMs / 1000);
  const modes = new PartitionModes((partition, fallback) => notices.emit('modeChanged', partition, fallback));
  const hydrator = new Hydrator(o.pool, hot, o.preloadPageSize ?? 1000);
  const ownership = new Ownership(o.pool, hot, o.instanceId, log, {
    rebuild: async (partition, epoch) => {
      const t0 = Date.now();
      await restoreAttempts(o.pool, hot, log, partition, epoch);
      hydrator.reset(partition);
      const added = await hydrator.run(partition, epoch, lookahead.effectiveMs);
      metrics.hydrated.inc({ partition: String(partition) }, added);
      if (added > 0) log.info({ partition, epoch, added, ms: Date.now() - t0 }, 'hot set rebuilt');
    },
    onOom: (partition) => fallBackOnOom(modes, log, partition),
    onEpoch: (partition) => metrics.epochChanges.inc({ partition: String(partition) }),
    onReady: (partition) => notices.emit('ready', partition),
    onRevoked: (partition) => notices.emit('revoked', partition),
  });
  const guard = new OwnershipGuard({ ownership, modes, log });
  return { hot, limiter, release, lookahead, modes, hydrator, ownership, guard };
}

function newDispatcher(
  { o, log, metrics, lagHistory }: Context,
  state: PartitionState,
  producer: Producer,
  routes: Routes,
): DispatchLanes {
  return new DispatchLanes(
    {
      hot: state.hot,
      ownership: state.ownership,
      modes: state.modes,
      guard: state.guard,
      release: state.release,
      pool: o.pool,
      producer,
      messages: new TaskMessages(o.codec, o.topics, routes),
      gate: new OccurrenceGate({
        codec: o.codec,
        jobEventsTopic: o.topics.jobEvents,
        recheckMs: o.overlapRecheckMs ?? 500,
      }),
      log,
      batchSize: o.batchSize ?? 500,
      maxSleepMs: o.maxSleepMs ?? 1000,
      fallbackPollMs: o.fallbackPollMs ?? 20,
      concurrency: o.dispatchConcurrency ?? 1,
      preDispatchMs: o.preDispatchMs ?? 0,
      quantum: o.tenantQuantum ?? 16,
      tenantWeights: o.tenantWeights ?? new Map(),
      onDispatched: (record, atMs) => {
        metrics.dispatched.inc({ resource_class: record.resource_class });
        metrics.dispatchLag.observe(record.resource_class, record.tenant_id, (atMs - record.due_at) / 1000);
        lagHistory.observe(record.resource_class, atMs, atMs - record.due_at);
        metrics.hops.observe(
          'due_to_dispatch',
          record.resource_class,
          record.tenant_id,
          (atMs - record.due_at) / 1000,
        );
        o.onDispatched?.(record, atMs);
      },
      onExpired: (record) => {
        metrics.expired.inc();
        o.onExpired?.(record);
      },
      onSkipped: (skipped) => {
        for (const [scheduleId, n] of skipped) metrics.schedules.runs(scheduleId, 'skipped', n);
      },
    },
    state.release.classes,
  );
}

function newPreloader(
  { o, log, metrics }: Context,
  state: PartitionState,
  dispatcher: DispatchLanes,
): Preloader {
  const intervalMs = o.preloadIntervalMs ?? 1000;
  return new Preloader({
    redis: o.redis,
    hot: state.hot,
    hydrator: state.hydrator,
    ownership: state.ownership,
    modes: state.modes,
    guard: state.guard,
    lookahead: state.lookahead,
    log,
    intervalMs,
    maxIntervalMs: Math.max(o.preloadMaxIntervalMs ?? 10_000, intervalMs),
    leadMs: o.preDispatchMs ?? 0,
    probeMs: o.fallbackProbeMs ?? 5000,
    recoverBelow: o.recoverBelow ?? 0.8,
    onHydrated: (partition, n) => {
      metrics.hydrated.inc({ partition: String(partition) }, n);
      // Jobs came in from PostgreSQL: one may be due before the partition's planned visit.
      if (n > 0) dispatcher.refresh(partition);
    },
    onRound: (partitions) => observeHotSets(state.hot, metrics, partitions),
  });
}

function newEventsConsumer(
  { o, log, metrics }: Context,
  state: PartitionState,
  dispatcher: DispatchLanes,
): JobEventsConsumer {
  return new JobEventsConsumer({
    kafka: o.kafka,
    topic: o.topics.jobEvents,
    groupId: o.groupId ?? 'kairos-delay-tier',
    sessionTimeoutMs: o.sessionTimeoutMs,
    ownership: state.ownership,
    dispatcher,
    log,
    onFatal: o.onFatal,
    applier: {
      recent: new RecentEvents(),
      decoder: new RecordDecoder(o.codec.registry, o.topics.jobEvents, SCHEMAS.jobEvent),
      dead: new DeadRecords({
        kafka: o.kafka,
        codec: o.codec,
        topic: o.topics.deadRecords,
        consumer: o.groupId ?? 'kairos-delay-tier',
        log,
        onSetAside: (topic, reason) => metrics.deadRecords.inc({ topic, reason }),
      }),
      hot: state.hot,
      ownership: state.ownership,
      modes: state.modes,
      guard: state.guard,
      log,
      windowMs: () => state.lookahead.effectiveMs,
      hops: metrics.hops,
      onScheduled: (record, atMs) => {
        // Due before the dispatcher's planned visit of its partition (due now, or a late event,
        // or simply sooner than anything else there): it wakes for it.
        dispatcher.scheduled(record.shard, record.due_at, record.resource_class);
        o.onScheduled?.(record, atMs);
      },
    },
  });
}

/** What partition state announces, to the loops built on it. */
function wireNotices(
  { metrics, notices }: Context,
  s: PartitionState,
  dispatcher: DispatchLanes,
  preloader: Preloader,
): void {
  notices.on('ready', (partition) => dispatcher.refresh(partition));
  notices.on('revoked', (partition) => {
    dispatcher.forget(partition);
    s.modes.forget(partition);
    s.hydrator.forget(partition);
    metrics.forgetPartition(partition);
  });
  notices.on('modeChanged', (partition, fallback) => {
    metrics.fallback.set({ partition: String(partition) }, fallback ? 1 : 0);
    // Under memory pressure the window shrinks, so the hot sets left need less.
    if (fallback) s.lookahead.shrink();
    else if (s.modes.fallbackPartitions().length === 0) s.lookahead.restore();
    metrics.lookahead.set(s.lookahead.effectiveMs / 1000);
    preloader.nudge();
    dispatcher.refresh(partition);
  });
}

/** Hot-set gauges (size, oldest due age) of the owned partitions, on Redis time. */
async function observeHotSets(
  hot: HotSet,
  metrics: DelayTierMetrics,
  partitions: readonly number[],
): Promise<void> {
  const now = await hot.serverTimeMs();
  for (const p of partitions) {
    const s = await hot.stats(p);
    metrics.hotSetSize.set({ partition: String(p) }, s.jobs);
    metrics.oldestDueAge.set(
      { partition: String(p) },
      s.oldestDueMs === undefined ? 0 : Math.max(0, now - s.oldestDueMs) / 1000,
    );
  }
}
