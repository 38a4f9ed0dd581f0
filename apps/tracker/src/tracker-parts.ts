import type { Logger, TrackerMetrics } from '@kairos/observability';
import { Canary } from './canary.js';
import { JobGauges } from './job-gauges.js';
import { OutboxHeartbeat } from './outbox-heartbeat.js';
import { ScheduleGenerator } from './schedule-generator.js';
import { ScheduleSla } from './schedule-sla.js';
import type { TrackerOptions } from './tracker.js';
import { Watchdog } from './watchdog.js';

/** The tracker's optional services, each undefined when its options turn it off. */
export interface TrackerParts {
  readonly generator: ScheduleGenerator | undefined;
  readonly canary: Canary | undefined;
  readonly heartbeat: OutboxHeartbeat | undefined;
  readonly watchdog: Watchdog | undefined;
  readonly gauges: JobGauges | undefined;
  readonly scheduleSla: ScheduleSla | undefined;
}

/** Builds the parts the options ask for, on the tracker's pool, metrics and log. */
export function trackerParts(o: TrackerOptions, metrics: TrackerMetrics, log: Logger): TrackerParts {
  const heartbeat = heartbeatPart(o, metrics, log);
  return {
    generator: generatorPart(o, metrics, log),
    canary: o.canary
      ? new Canary({
          ...o.canary,
          pool: o.pool,
          resourceClasses: o.resourceClasses,
          metrics: metrics.canary,
          log,
        })
      : undefined,
    heartbeat,
    watchdog: o.watchdog
      ? new Watchdog({
          ...(heartbeat && { outboxLagMs: () => heartbeat.lagMs() }),
          ...o.watchdog,
          pool: o.pool,
          codec: o.codec,
          topics: o.topics,
          metrics: metrics.watch,
          log,
        })
      : undefined,
    gauges: o.gauges
      ? new JobGauges({
          ...o.gauges,
          pool: o.pool,
          resourceClasses: o.resourceClasses,
          metrics: metrics.watch,
          log,
        })
      : undefined,
    scheduleSla: scheduleSlaPart(o, metrics, log),
  };
}

function generatorPart(
  o: TrackerOptions,
  metrics: TrackerMetrics,
  log: Logger,
): ScheduleGenerator | undefined {
  if (o.generator === false) return undefined;
  return new ScheduleGenerator({
    log,
    ...(o.now ? { now: o.now } : {}),
    ...o.generator,
    pool: o.pool,
    codec: o.codec,
    jobEventsTopic: o.topics.jobEvents,
    metrics: metrics.schedules,
  });
}

/** The heartbeat follower, its lag exported as kairos_outbox_lag_seconds. */
function heartbeatPart(o: TrackerOptions, metrics: TrackerMetrics, log: Logger): OutboxHeartbeat | undefined {
  if (!o.outboxHeartbeat) return undefined;
  const heartbeat = new OutboxHeartbeat({
    ...o.outboxHeartbeat,
    kafka: o.kafka,
    topic: o.topics.heartbeat,
    log,
  });
  metrics.watch.outboxLagFrom(() => heartbeat.lagMs());
  return heartbeat;
}

function scheduleSlaPart(o: TrackerOptions, metrics: TrackerMetrics, log: Logger): ScheduleSla | undefined {
  if (o.scheduleSla === false) return undefined;
  return new ScheduleSla({
    ...(o.now ? { now: o.now } : {}),
    ...o.scheduleSla,
    pool: o.pool,
    metrics: metrics.schedules,
    alertActive: metrics.canary.alertActive,
    log,
  });
}
