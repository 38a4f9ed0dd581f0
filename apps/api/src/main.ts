import { JobCommands, Replays, ScheduleCommands } from '@kairos/commands';
import {
  apiEnv,
  canaryEnv,
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
import { postgresCheck, startOpsServer } from '@kairos/http';
import { createHttpMetrics, createLogger, startOtelExport } from '@kairos/observability';
import { defaultConsoleDir } from './console-routes.js';
import { createApiServer } from './server.js';

runMain(async () => {
  const env = kairosEnv();
  const { port, host, metricsHost, metricsPort, replayStaleMs, ...auth } = apiEnv();
  const log = createLogger({ component: 'api', level: env.logLevel });
  // OpenTelemetry spans, exported only when an OTLP endpoint is configured (off by default).
  const otel = await startOtelExport(tracingEnv('api'), log);
  const topics = topicNames(env.topicPrefix);
  const kafka = createKafka(kafkaClientOptions(env, 'api'));
  await assertPartitionCount(kafka, topics.jobEvents, env.jobEventPartitions);
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    max: 20,
    // Warm connections for the next request after a quiet spell (see PoolOptions.min).
    min: 2,
    applicationName: 'kairos-api',
  });
  await ensureJobPartitions(pool, new Date());
  const relay = await startOutboxRelay(kafka, topics, env, log);
  publishOutboxAfterCommit(pool, relay);
  const registry = createRegistryClient(registryOptions(env));
  const codec = new AvroCodec(registry);
  const limits = compileJobLimits({ resourceClasses: env.resourceClasses });
  const commands = new JobCommands({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits,
    createGroup: createGroupEnv(),
  });
  const schedules = new ScheduleCommands({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits,
    ...scheduleEnv(),
  });
  const replays = new Replays({
    pool,
    jobs: commands,
    instanceId: env.instanceId,
    staleMs: replayStaleMs,
    onError: (err, replayId) => log.error({ err, replayId }, 'replay failed; the next sweep retries it'),
  });
  await replays.start();
  const status = {
    pool,
    kafka,
    registry,
    groupPrefix: `${env.topicPrefix}kairos-`,
    topicPrefix: env.topicPrefix,
  };
  const readiness = [{ name: 'schema registry', check: () => registry.getAllSubjects() }];
  const metrics = createHttpMetrics();
  // The overview judges canaries by the tracker's settings (the same variables).
  const { intervalMs: canaryIntervalMs, stallMs: canaryStallMs } = canaryEnv();
  const app = await createApiServer({
    commands,
    schedules,
    replays,
    pool,
    log,
    status,
    readiness,
    metrics,
    consoleDir: defaultConsoleDir(),
    canary: { intervalMs: canaryIntervalMs, stallMs: canaryStallMs },
    ...auth,
  });
  // The operations port (metrics, probes) of every app: the API port keeps its routes behind a key.
  const metricsServer = await startOpsServer({
    host: metricsHost,
    port: metricsPort,
    metrics,
    checks: [postgresCheck(pool), ...readiness],
  });
  const metricsUrl = metricsServer.url;
  const url = await app.listen({ host, port });
  log.info({ url, metricsUrl }, 'api listening');
  onShutdown(async () => {
    await app.close();
    await metricsServer.close();
    await replays.stop();
    await relay?.stop();
    await pool.end();
    await otel?.shutdown();
  });
});
