import { JobCommands } from '@kairos/commands';
import { redisOptions, type CanaryEnv, type KairosEnv, type WatchdogEnv } from '@kairos/config';
import { compileJobLimits } from '@kairos/core';
import { createPool, type Pool } from '@kairos/db';
import { postgresCheck, runningCheck, startOpsServer } from '@kairos/http';
import { consumerGroups, type AvroCodec, type TopicNames } from '@kairos/kafka';
import { createRedis, HotSet, Leases } from '@kairos/redis';
import type { Kafka } from 'kafkajs';

import { alertWebhook } from './alert-webhook.js';
import type { Tracker, TrackerOptions } from './tracker.js';

/** Tracker options a part contributes, and how to close what it opened. */
interface Part<K extends keyof TrackerOptions> {
  readonly options: Pick<TrackerOptions, K>;
  close(): Promise<void>;
}

/** The canary (KAIROS_CANARY_*): its rows on a pool of their own, not relayed, so Debezium carries them. */
export function canaryPart(
  env: KairosEnv,
  canary: CanaryEnv,
  codec: AvroCodec,
  topics: TopicNames,
): Part<'canary'> {
  if (canary.intervalMs === 0) return { options: {}, close: () => Promise.resolve() };
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    max: 1,
    applicationName: 'kairos-canary',
  });
  const jobs = new JobCommands({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits: compileJobLimits({ resourceClasses: env.resourceClasses }),
  });
  return {
    options: {
      canary: {
        jobs,
        intervalMs: canary.intervalMs,
        stallMs: canary.stallMs,
        ...(canary.webhookUrl && { notify: alertWebhook(canary.webhookUrl) }),
      },
    },
    close: () => pool.end(),
  };
}

/**
 * The watchdog, gauges and outbox heartbeat (KAIROS_WATCHDOG_*, KAIROS_GAUGES_INTERVAL_MS). The
 * watchdog reads the hot sets and leases (never writes them) and reports lost attempts itself:
 * its Redis client and producer exist only when it is on.
 */
export async function watchPart(
  env: KairosEnv,
  watch: WatchdogEnv,
  kafka: Kafka,
): Promise<Part<'watchdog' | 'gauges' | 'outboxHeartbeat'>> {
  const watchdog = watch.intervalMs > 0 ? await watchdogPart(env, watch, kafka) : undefined;
  return {
    options: {
      outboxHeartbeat: {},
      ...(watchdog && { watchdog: watchdog.options }),
      ...(watch.gaugesIntervalMs > 0 && {
        gauges: {
          shards: env.jobEventPartitions,
          intervalMs: watch.gaugesIntervalMs,
          consumerGroups: () => consumerGroups(kafka, `${env.topicPrefix}kairos-`),
        },
      }),
    },
    close: () => watchdog?.close() ?? Promise.resolve(),
  };
}

async function watchdogPart(
  env: KairosEnv,
  watch: WatchdogEnv,
  kafka: Kafka,
): Promise<{ options: NonNullable<TrackerOptions['watchdog']>; close(): Promise<void> }> {
  const redis = createRedis(env.redisUrl, redisOptions(env));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  try {
    await producer.connect();
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  return {
    options: {
      hot: new HotSet(redis),
      leases: new Leases(redis),
      producer,
      shards: env.jobEventPartitions,
      intervalMs: watch.intervalMs,
      graceMs: watch.graceMs,
      queuedTimeoutMs: watch.queuedTimeoutMs,
      runningTimeoutMs: watch.runningTimeoutMs,
      outboxStallMs: watch.outboxStallMs,
    },
    close: async () => {
      await producer.disconnect();
      redis.disconnect();
    },
  };
}

/** Prometheus (/metrics), liveness and readiness on the tracker's metrics port. */
export function metricsServer(
  tracker: Tracker,
  pool: Pool,
  listen: { readonly host: string; readonly port: number },
): Promise<{ url: string; close(): Promise<void> }> {
  return startOpsServer({
    host: listen.host,
    port: listen.port,
    metrics: tracker.metrics,
    checks: [postgresCheck(pool), runningCheck('tracker', tracker)],
  });
}
