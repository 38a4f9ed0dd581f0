import {
  httpAuthEnv,
  kafkaClientOptions,
  kairosEnv,
  onShutdown,
  tracingEnv,
  redisOptions,
  registryOptions,
  runMain,
  scheduleSlaEnv,
} from '@kairos/config';
import { createPool, publishOutboxAfterCommit } from '@kairos/db';
import { AvroCodec, createKafka, createRegistryClient, startOutboxRelay, topicNames } from '@kairos/kafka';
import { KeyVerifier, postgresCheck, runningCheck } from '@kairos/http';
import { createDelayTierMetrics, createLogger, startOtelExport } from '@kairos/observability';
import { createRedis } from '@kairos/redis';
import { createAdminServer } from './admin-server.js';
import { DelayTier } from './delay-tier.js';
import { tierEnv } from './tier-env.js';

runMain(async () => {
  const env = kairosEnv();
  const tenv = tierEnv();
  const log = createLogger({
    component: 'delay-tier',
    level: env.logLevel,
    base: { instance: env.instanceId },
  });
  // OpenTelemetry spans, exported only when an OTLP endpoint is configured (off by default).
  const otel = await startOtelExport(tracingEnv('delay-tier'), log);
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    // A connection per partition claiming at once, the critical lane's, the pre-loader's and the reaper's.
    max: tenv.dispatchConcurrency + 5,
    applicationName: 'kairos-delay-tier',
  });
  const kafka = createKafka(kafkaClientOptions(env, 'delay-tier'));
  const topics = topicNames(env.topicPrefix);
  // The overlap gate's events (a run skipped or cancelled at dispatch) go out at once too.
  const relay = await startOutboxRelay(kafka, topics, env, log);
  publishOutboxAfterCommit(pool, relay);
  const redis = createRedis(env.redisUrl, redisOptions(env));
  const tier = new DelayTier({
    kafka,
    codec: new AvroCodec(createRegistryClient(registryOptions(env))),
    redis,
    pool,
    topics,
    instanceId: env.instanceId,
    groupId: `${env.topicPrefix}kairos-delay-tier`,
    sessionTimeoutMs: env.sessionTimeoutMs,
    resourceClasses: env.resourceClasses,
    lookaheadMs: tenv.lookaheadMs,
    minLookaheadMs: tenv.minLookaheadMs,
    preDispatchMs: tenv.preDispatchMs,
    versionTtlSeconds: tenv.versionTtlSeconds,
    dispatchConcurrency: tenv.dispatchConcurrency,
    maxSleepMs: tenv.dispatchMaxSleepMs,
    preloadMaxIntervalMs: tenv.preloadMaxIntervalMs,
    tenantWeights: tenv.tenantWeights,
    overlapRecheckMs: tenv.overlapRecheckMs,
    waitingAlertAfterMs: tenv.waitingAlertAfterMs,
    metrics: createDelayTierMetrics({ scheduleLabelLimit: scheduleSlaEnv().scheduleLabelLimit }),
    log,
    onFatal: () => process.exit(1),
  });
  await tier.start();
  const auth = httpAuthEnv(process.env, tenv.adminHost, 'KAIROS_DELAY_TIER_ADMIN_HOST');
  if (auth.auth === 'off')
    log.warn('admin authentication is OFF (KAIROS_API_AUTH=off; local development only)');
  const admin = await createAdminServer({
    admin: tier.admin(),
    metrics: tier.metrics,
    keys: auth.auth === 'off' ? 'off' : new KeyVerifier({ pool, cacheMs: auth.keyCacheMs }),
    readiness: [
      { name: 'redis', check: () => redis.ping() },
      postgresCheck(pool),
      runningCheck('delay tier', tier),
    ],
    log,
  });
  const adminUrl = await admin.listen({ host: tenv.adminHost, port: tenv.adminPort });
  log.info({ adminUrl }, 'delay tier started');
  onShutdown(async () => {
    await admin.close();
    await tier.stop();
    await relay?.stop();
    redis.disconnect();
    await pool.end();
    await otel?.shutdown();
  });
});
