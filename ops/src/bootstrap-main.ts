#!/usr/bin/env node
// kairos-bootstrap: prepares an existing cluster for Kairos (migrations, topics, the outbox
// connector), idempotently, from the same KAIROS_* settings as the apps. Environment read here only.
import { resolve } from 'node:path';
import { intVar, kafkaClientOptions, kairosEnv, runMain } from '@kairos/config';
import { createApiKey, createPool } from '@kairos/db';
import { Command } from 'commander';
import { bootstrapTarget } from './bootstrap.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

runMain(async () => {
  const program = new Command('kairos-bootstrap')
    .description(
      'apply migrations, create the topics of the catalogue and register the outbox connector on the cluster the KAIROS_* settings name (idempotent)',
    )
    .option('--skip-connector', 'register no Debezium connector (you run Debezium another way)')
    .option('--connectors <dir>', 'folder of connector JSON files', resolve(ROOT, 'connectors'))
    .option(
      '--create-admin-key <name>',
      'also create an API key (admin of every tenant) with this name and print it: the first key of a new deployment',
    )
    .parse();
  const opts = program.opts<{ skipConnector?: boolean; connectors: string; createAdminKey?: string }>();
  const env = kairosEnv();
  const e = process.env;
  const connectUrl = e.KAIROS_CONNECT_URL;
  if (!connectUrl && !opts.skipConnector) {
    console.error('configuration error: KAIROS_CONNECT_URL is required (or pass --skip-connector)');
    process.exit(2);
  }
  const isr = e.KAIROS_TOPIC_MIN_INSYNC_REPLICAS;
  await bootstrapTarget(
    {
      pgUrl: env.pgUrl,
      schema: env.dbSchema,
      kafkaBrokers: env.kafkaBrokers.join(','),
      kafka: kafkaClientOptions(env, 'bootstrap'),
      connectUrl: connectUrl ?? '',
      connectorsDir: opts.connectors,
      jobEventPartitions: env.jobEventPartitions,
      resourceClasses: env.resourceClasses,
      topicPrefix: env.topicPrefix,
      replicationFactor: intVar(e, 'KAIROS_TOPIC_REPLICATION_FACTOR', 1, 1, 32),
      ...(isr ? { minInsyncReplicas: intVar(e, 'KAIROS_TOPIC_MIN_INSYNC_REPLICAS', 1, 1, 32) } : {}),
      ...(e.KAIROS_CONNECT_PG_URL ? { connectPgUrl: e.KAIROS_CONNECT_PG_URL } : {}),
      skipConnector: opts.skipConnector === true,
    },
    (line) => console.log(line),
  );
  if (opts.createAdminKey !== undefined) {
    const pool = createPool({
      connectionString: env.pgUrl,
      schema: env.dbSchema,
      max: 1,
      applicationName: 'kairos-bootstrap',
    });
    try {
      const { key, row } = await createApiKey(
        pool,
        { name: opts.createAdminKey, tenant: '*', scopes: ['admin'], expiresAt: null, ratePerSec: null },
        'bootstrap',
      );
      console.log(`admin API key ${row.id} (${row.name}), shown this once; keep it secret:\n${key}`);
    } finally {
      await pool.end();
    }
  }
  console.log('bootstrap done');
});
