import {
  canaryEnv,
  intVar,
  kafkaClientOptions,
  kairosEnv,
  onShutdown,
  registryOptions,
  runMain,
  scheduleSlaEnv,
  tracingEnv,
  watchdogEnv,
} from '@kairos/config';
import { createPool, publishOutboxAfterCommit } from '@kairos/db';
import { AvroCodec, createKafka, createRegistryClient, startOutboxRelay, topicNames } from '@kairos/kafka';
import { createLogger, createTrackerMetrics, startOtelExport } from '@kairos/observability';
import { alertWebhook } from './alert-webhook.js';
import { canaryPart, metricsServer, watchPart } from './main-parts.js';
import { Tracker } from './tracker.js';

runMain(async () => {
  const env = kairosEnv();
  const log = createLogger({ component: 'tracker', level: env.logLevel, base: { instance: env.instanceId } });
  // OpenTelemetry spans, exported only when an OTLP endpoint is configured (off by default).
  const otel = await startOtelExport(tracingEnv('tracker'), log);
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
  const canaryConfig = canaryEnv();
  const canary = canaryPart(env, canaryConfig, codec, topics);
  const watch = await watchPart(env, watchdogEnv(), kafka);
  const sla = scheduleSlaEnv();
  const webhookUrl = canaryConfig.webhookUrl;
  const slaNotify = webhookUrl ? { notify: alertWebhook(webhookUrl) } : {};
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
    scheduleSla: { intervalMs: sla.intervalMs, maxIntervalMs: sla.maxIntervalMs, ...slaNotify },
    ...canary.options,
    ...watch.options,
  });
  await tracker.start();
  const metrics = await metricsServer(tracker, pool, {
    host: process.env.KAIROS_TRACKER_METRICS_HOST ?? '127.0.0.1',
    port: intVar(process.env, 'KAIROS_TRACKER_METRICS_PORT', 58092, 0, 65535),
  });
  log.info({ metricsUrl: metrics.url }, 'tracker started');
  onShutdown(async () => {
    await metrics.close();
    await tracker.stop();
    await watch.close();
    await relay?.stop();
    await canary.close();
    await pool.end();
    await otel?.shutdown();
  });
});
