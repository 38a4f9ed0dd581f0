import { resolve } from 'node:path';
import { bootstrapTarget, type BootstrapTarget } from '@kairos/bootstrap';
import { EnvError, intVar, kafkaClientOptions, kairosEnv } from '@kairos/config';
import { createApiKey, createPool } from '@kairos/db';
import { Command } from 'commander';

/** The connector files shipped with Kairos (apps/cli/{src,dist} → the checkout's connectors/). */
const CONNECTORS = resolve(import.meta.dirname, '..', '..', '..', 'connectors');

interface BootstrapOpts {
  skipConnector?: boolean;
  connectors: string;
  createAdminKey?: string;
}

/** The cluster the KAIROS_* settings name, as bootstrap targets it. */
export function bootstrapTargetOf(e: NodeJS.ProcessEnv, o: BootstrapOpts): BootstrapTarget {
  const env = kairosEnv(e);
  const connectUrl = e.KAIROS_CONNECT_URL;
  if (!connectUrl && !o.skipConnector)
    throw new EnvError('KAIROS_CONNECT_URL is required (or pass --skip-connector)');
  return {
    pgUrl: env.pgUrl,
    schema: env.dbSchema,
    kafkaBrokers: env.kafkaBrokers.join(','),
    kafka: kafkaClientOptions(env, 'bootstrap'),
    connectUrl: connectUrl ?? '',
    connectorsDir: o.connectors,
    jobEventPartitions: env.jobEventPartitions,
    resourceClasses: env.resourceClasses,
    topicPrefix: env.topicPrefix,
    replicationFactor: intVar(e, 'KAIROS_TOPIC_REPLICATION_FACTOR', 1, 1, 32),
    ...(e.KAIROS_TOPIC_MIN_INSYNC_REPLICAS
      ? { minInsyncReplicas: intVar(e, 'KAIROS_TOPIC_MIN_INSYNC_REPLICAS', 1, 1, 32) }
      : {}),
    ...(e.KAIROS_CONNECT_PG_URL ? { connectPgUrl: e.KAIROS_CONNECT_PG_URL } : {}),
    ...(e.KAIROS_CONNECT_KAFKA_BROKERS ? { connectKafkaBrokers: e.KAIROS_CONNECT_KAFKA_BROKERS } : {}),
    skipConnector: o.skipConnector === true,
  };
}

async function createFirstKey(t: BootstrapTarget, name: string): Promise<void> {
  const pool = createPool({
    connectionString: t.pgUrl,
    ...(t.schema ? { schema: t.schema } : {}),
    max: 1,
    applicationName: 'kairos-bootstrap',
  });
  try {
    const made = await createApiKey(
      pool,
      { name, tenant: '*', scopes: ['admin'], expiresAt: null, ratePerSec: null },
      'bootstrap',
    );
    // Only a key (k_…) as creator can be refused.
    if (!made) throw new Error('createApiKey refused a bootstrap key');
    const { key, row } = made;
    console.log(`admin API key ${row.id} (${row.name}), shown this once; keep it secret:\n${key}`);
  } finally {
    await pool.end();
  }
}

/**
 * `kairos bootstrap`: prepares an existing cluster for Kairos (migrations, topics, the outbox
 * connector), idempotently, from the same KAIROS_* settings as the apps. Talks to PostgreSQL,
 * Kafka and Connect directly: it is what runs before there is an API.
 */
export function bootstrapCommand(): Command {
  return new Command('bootstrap')
    .description(
      'apply migrations, create the topics of the catalogue and register the outbox connector on the cluster the KAIROS_* settings name (idempotent; needs KAIROS_PG_URL, not an API key)',
    )
    .option('--skip-connector', 'register no Debezium connector (you run Debezium another way)')
    .option('--connectors <dir>', 'folder of connector JSON files', CONNECTORS)
    .option(
      '--create-admin-key <name>',
      'also create an API key (admin of every tenant) with this name and print it: the first key of a new deployment',
    )
    .action(async (o: BootstrapOpts) => {
      const target = bootstrapTargetOf(process.env, o);
      await bootstrapTarget(target, (line) => console.log(line));
      if (o.createAdminKey !== undefined) await createFirstKey(target, o.createAdminKey);
      console.log('bootstrap done');
    });
}
