import { kairosEnv, onShutdown, runMain } from '@kairos/config';
import { createPool } from '@kairos/db';
import { AvroCodec, createKafka, createRegistryClient, topicNames } from '@kairos/kafka';
import { createLogger } from '@kairos/observability';
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
  const tracker = new Tracker({
    kafka: createKafka({ brokers: env.kafkaBrokers, clientId: `kairos-tracker-${env.instanceId}` }),
    codec: new AvroCodec(createRegistryClient({ url: env.registryUrl })),
    pool,
    topics: topicNames(env.topicPrefix),
    resourceClasses: env.resourceClasses,
    groupId: `${env.topicPrefix}kairos-tracker`,
    log,
    onFatal: () => process.exit(1),
  });
  await tracker.start();
  log.info('tracker started');
  onShutdown(async () => {
    await tracker.stop();
    await pool.end();
  });
});
