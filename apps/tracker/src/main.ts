import { JobCommands } from '@kairos/commands';
import {
  canaryEnv,
  intVar,
  kafkaClientOptions,
  kairosEnv,
  onShutdown,
  redisOptions,
  registryOptions,
  runMain,
  scheduleSlaEnv,
  watchdogEnv,
} from '@kairos/config';
import { compileJobLimits } from '@kairos/core';
import { createPool, publishOutboxAfterCommit } from '@kairos/db';
import {
  AvroCodec,
  consumerGroups,
  createKafka,
  createRegistryClient,
  startOutboxRelay,
  topicNames,
} from '@kairos/kafka';
import { createRedis, HotSet, Leases } from '@kairos/redis';
import { createLogger, createTrackerMetrics } from '@kairos/observability';
import { readinessHandler, runningCheck } from '@kairos/http';
import Fastify from 'fastify';
import { alertWebhook } from './alert-webhook.js';
import { Tracker } from './tracker.js';

runMain(async () => {
  const env = kairosEnv();
  const log = createLogger({ component: 'tracker', level: env.logLevel, base: { instance: env.instanceId } });
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    max: 4,
    applicationName: 'kairos-tracker',
  });
  const kafka = createKafka(kafkaClientOptions(env, 'tracker'));
  const topics = topicNames(env.topicPrefix);
  // Retries and schedule runs it writes: their job events go out at once too.
  const relay = await startOutboxRelay(kafka, topics, env, log);
  publishOutboxAfterCommit(pool, relay);
  const codec = new AvroCodec(createRegistryClient(registryOptions(env)));
  const canary = canaryEnv();
  const sla = scheduleSlaEnv();
  // Canaries are written on a pool of their own, not relayed: they reach Kafka through Debezium.
  const canaryPool =
    canary.intervalMs === 0
      ? undefined
      : createPool({
          connectionString: env.pgUrl,
          schema: env.dbSchema,
          max: 1,
          applicationName: 'kairos-canary',
        });
  const watch = watchdogEnv();
  // The watchdog reads the hot sets and leases (never writes them) and reports lost attempts.
  const redis = createRedis(env.redisUrl, redisOptions(env));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const tracker = new Tracker({
    kafka,
    codec,
    pool,
    topics,
    resourceClasses: env.resourceClasses,
    groupId: `${env.topicPrefix}kairos-tracker`,
    sessionTimeoutMs: env.sessionTimeoutMs,
    log,
    onFatal: () => process.exit(1),
    metrics: createTrackerMetrics(sla.scheduleLabelLimit),
    // Recurring schedules' occurrences, lookahead ahead: the generator sleeps until the next
    // generation time or misfire point, between the interval and the max interval.
    generator: {
      intervalMs: intVar(process.env, 'KAIROS_SCHEDULE_INTERVAL_MS', 1000, 10, 60_000),
      maxIntervalMs: intVar(process.env, 'KAIROS_SCHEDULE_MAX_INTERVAL_MS', 10_000, 10, 600_000),
      settings: {
        lookaheadMs: intVar(process.env, 'KAIROS_SCHEDULE_LOOKAHEAD_MS', 120_000, 1000, 86_400_000),
        minAhead: intVar(process.env, 'KAIROS_SCHEDULE_MIN_AHEAD', 2, 0, 1000),
      },
    },
    // Schedules with sla_ms: sleeps until the next run's deadline, between the interval and the max.
    scheduleSla: {
      intervalMs: sla.intervalMs,
      maxIntervalMs: sla.maxIntervalMs,
      ...(canary.webhookUrl && { notify: alertWebhook(canary.webhookUrl) }),
    },
    ...(canaryPool && {
      canary: {
        jobs: new JobCommands({
          pool: canaryPool,
          codec,
          jobEventsTopic: topics.jobEvents,
          jobEventPartitions: env.jobEventPartitions,
          limits: compileJobLimits({ resourceClasses: env.resourceClasses }),
        }),
        intervalMs: canary.intervalMs,
        stallMs: canary.stallMs,
        ...(canary.webhookUrl && { notify: alertWebhook(canary.webhookUrl) }),
      },
    }),
    ...(watch.intervalMs > 0 && {
      watchdog: {
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
    }),
    ...(watch.gaugesIntervalMs > 0 && {
      gauges: {
        shards: env.jobEventPartitions,
        intervalMs: watch.gaugesIntervalMs,
        consumerGroups: () => consumerGroups(kafka, `${env.topicPrefix}kairos-`),
      },
    }),
  });
  await tracker.start();
  // Prometheus only (zombie writes, results, retries, dead letters, the canary, schedules' runs).
  const metrics = Fastify({ logger: false });
  metrics.get('/metrics', async (_req, reply) =>
    reply.type(tracker.metrics.contentType).send(await tracker.metrics.text()),
  );
  metrics.get('/healthz', () => ({ status: 'ok' }));
  metrics.get(
    '/readyz',
    readinessHandler([
      { name: 'postgresql', check: () => pool.query('SELECT 1') },
      runningCheck('tracker', tracker),
    ]),
  );
  const metricsUrl = await metrics.listen({
    host: process.env.KAIROS_TRACKER_METRICS_HOST ?? '127.0.0.1',
    port: intVar(process.env, 'KAIROS_TRACKER_METRICS_PORT', 58092, 0, 65535),
  });
  log.info({ metricsUrl }, 'tracker started');
  onShutdown(async () => {
    await metrics.close();
    await tracker.stop();
    await producer.disconnect();
    redis.disconnect();
    await relay?.stop();
    await canaryPool?.end();
    await pool.end();
  });
});
