import { JobCommands, ScheduleCommands } from '@kairos/commands';
import { intVar, kairosEnv, onShutdown, runMain } from '@kairos/config';
import { compileJobLimits } from '@kairos/core';
import { createPool, ensureJobPartitions } from '@kairos/db';
import {
  assertPartitionCount,
  AvroCodec,
  createKafka,
  createRegistryClient,
  topicNames,
} from '@kairos/kafka';
import { createLogger } from '@kairos/observability';
import { createApiServer } from './server.js';

runMain(async () => {
  const env = kairosEnv();
  const port = intVar(process.env, 'KAIROS_API_PORT', 58090, 0, 65535);
  const host = process.env.KAIROS_API_HOST ?? '127.0.0.1';
  const log = createLogger({ component: 'api', level: env.logLevel });
  const topics = topicNames(env.topicPrefix);
  await assertPartitionCount(
    createKafka({ brokers: env.kafkaBrokers }),
    topics.jobEvents,
    env.jobEventPartitions,
  );
  const pool = createPool({
    connectionString: env.pgUrl,
    schema: env.dbSchema,
    max: 20,
    applicationName: 'kairos-api',
  });
  await ensureJobPartitions(pool, new Date());
  const codec = new AvroCodec(createRegistryClient({ url: env.registryUrl }));
  const limits = compileJobLimits({ resourceClasses: env.resourceClasses });
  const commands = await JobCommands.create({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits,
  });
  const schedules = await ScheduleCommands.create({
    pool,
    codec,
    jobEventsTopic: topics.jobEvents,
    jobEventPartitions: env.jobEventPartitions,
    limits,
    misfireToleranceMs: intVar(process.env, 'KAIROS_MISFIRE_TOLERANCE_MS', 5000, 1000, 3_600_000),
    generation: {
      lookaheadMs: intVar(process.env, 'KAIROS_SCHEDULE_LOOKAHEAD_MS', 120_000, 1000, 86_400_000),
      minAhead: intVar(process.env, 'KAIROS_SCHEDULE_MIN_AHEAD', 2, 0, 1000),
    },
    backfill: {
      maxCount: intVar(process.env, 'KAIROS_BACKFILL_MAX_COUNT', 1000, 1, 100_000),
      ratePerSec: intVar(process.env, 'KAIROS_BACKFILL_RATE_PER_SEC', 10, 1, 10_000),
    },
  });
  const app = createApiServer({ commands, schedules, log });
  const url = await app.listen({ host, port });
  log.info({ url }, 'api listening');
  onShutdown(async () => {
    await app.close();
    await pool.end();
  });
});
