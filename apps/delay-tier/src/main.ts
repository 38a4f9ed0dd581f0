import { kairosEnv, onShutdown, runMain } from '@kairos/config';
import { createPool } from '@kairos/db';
import { AvroCodec, createKafka, createRegistryClient, topicNames } from '@kairos/kafka';
import { createLogger } from '@kairos/observability';
import { Redis } from 'ioredis';
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
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    // A connection per partition claiming at once, plus the pre-loader's and the reaper's.
    max: tenv.dispatchConcurrency + 4,
    applicationName: 'kairos-delay-tier',
  });
  const redis = new Redis(env.redisUrl, { keyPrefix: env.redisKeyPrefix, maxRetriesPerRequest: 3 });
  const tier = new DelayTier({
    kafka: createKafka({ brokers: env.kafkaBrokers, clientId: `kairos-delay-tier-${env.instanceId}` }),
    codec: new AvroCodec(createRegistryClient({ url: env.registryUrl })),
    redis,
    pool,
    topics: topicNames(env.topicPrefix),
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
    log,
    onFatal: () => process.exit(1),
  });
  await tier.start();
  const admin = createAdminServer({ admin: tier.admin(), metrics: tier.metrics, log });
  const adminUrl = await admin.listen({ host: tenv.adminHost, port: tenv.adminPort });
  log.info({ adminUrl }, 'delay tier started');
  onShutdown(async () => {
    await admin.close();
    await tier.stop();
    redis.disconnect();
    await pool.end();
  });
});
