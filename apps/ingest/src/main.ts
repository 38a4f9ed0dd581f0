import { JobCommands, ScheduleCommands } from '@kairos/commands';
import {
  createGroupEnv,
  kafkaClientOptions,
  kairosEnv,
  onShutdown,
  tracingEnv,
  registryOptions,
  runMain,
  scheduleEnv,
} from '@kairos/config';
import { compileJobLimits } from '@kairos/core';
import { createPool, ensureJobPartitions, publishOutboxAfterCommit } from '@kairos/db';
import {
  assertPartitionCount,
  AvroCodec,
  createKafka,
  createRegistryClient,
  startOutboxRelay,
  topicNames,
} from '@kairos/kafka';
import { createLogger, startOtelExport } from '@kairos/observability';
import { postgresCheck, runningCheck, startOpsServer } from '@kairos/http';
import { Ingest } from './ingest.js';
import { ingestEnv } from './ingest-env.js';

runMain(async () => {
  const env = kairosEnv();
  const ienv = ingestEnv();
  const log = createLogger({ component: 'ingest', level: env.logLevel, base: { instance: env.instanceId } });
  // OpenTelemetry spans, exported only when an OTLP endpoint is configured (off by default).
  const otel = await startOtelExport(tracingEnv('ingest'), log);
  const topics = topicNames(env.topicPrefix);
  const kafka = createKafka(kafkaClientOptions(env, 'ingest'));
  // Shards are computed here (the commands): refuse a partition count the topic does not have.
  await assertPartitionCount(kafka, topics.jobEvents, env.jobEventPartitions);
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    max: 4,
    applicationName: 'kairos-ingest',
    onIdleError: (err) => log.warn({ err }, 'idle PostgreSQL connection lost'),
  });
  await ensureJobPartitions(pool, new Date());
  const relay = await startOutboxRelay(kafka, topics, env, log);
  publishOutboxAfterCommit(pool, relay);
  const registry = createRegistryClient(registryOptions(env));
  const handlers = {
    pool,
    codec: new AvroCodec(registry),
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits: compileJobLimits({ resourceClasses: env.resourceClasses }),
  };
  const commands = new JobCommands({ ...handlers, createGroup: createGroupEnv() });
  // The API's settings (misfire tolerance, generation ahead): a schedule is the same whichever way it came.
  const schedules = new ScheduleCommands({ ...handlers, ...scheduleEnv() });
  const ingest = new Ingest({
    kafka,
    registry,
    commands,
    schedules,
    pool,
    topics,
    groupId: `${env.topicPrefix}kairos-ingest`,
    sessionTimeoutMs: env.sessionTimeoutMs,
    instanceId: env.instanceId,
    ...(ienv.tenants ? { tenants: ienv.tenants } : {}),
    ...(ienv.tenantSources ? { tenantSources: ienv.tenantSources } : {}),
    partitionsConsumedConcurrently: ienv.partitionsConsumedConcurrently,
    log,
    onFatal: () => process.exit(1),
  });
  await ingest.start();
  // Prometheus only: requests by command and result, rejections by reason, batch time, request age.
  const metrics = await startOpsServer({
    host: ienv.metricsHost,
    port: ienv.metricsPort,
    metrics: ingest.metrics,
    checks: [postgresCheck(pool), runningCheck('ingest', ingest)],
  });
  log.info({ metricsUrl: metrics.url }, 'ingest metrics listening');
  onShutdown(async () => {
    await metrics.close();
    await ingest.stop();
    await relay?.stop();
    await pool.end();
    await otel?.shutdown();
  });
});
