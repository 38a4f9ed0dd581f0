import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { dirs, serviceUrls } from '../config.js';
import { spawnDetached } from '../proc.js';
import { jvmClasspath } from './kafka.js';
import { writeLog4j2Config } from './log4j.js';
import type { ServiceDef } from './types.js';

export const connect: ServiceDef = {
  name: 'connect',
  dependsOn: ['kafka', 'postgres'],
  startTimeoutMs: 180_000,
  listens: (cfg) => `http://${cfg.host}:${cfg.ports.connect}`,
  // Healthy = REST up and the Debezium plugin loaded, so connector registration can follow.
  async healthy(cfg) {
    try {
      const res = await fetch(`http://${cfg.host}:${cfg.ports.connect}/connector-plugins`, {
        signal: AbortSignal.timeout(2000),
      });
      if (!res.ok) return false;
      const plugins = (await res.json()) as { class: string }[];
      return plugins.some((p) => p.class === 'io.debezium.connector.postgresql.PostgresConnector');
    } catch {
      return false;
    }
  },
  start({ cfg, tools, jars, logFile, pidFile }) {
    const confDir = resolve(dirs(cfg).connect, 'config');
    mkdirSync(confDir, { recursive: true });
    const props = resolve(confDir, 'connect-distributed.properties');
    const log4j = resolve(confDir, 'log4j2.properties');
    writeLog4j2Config(log4j);
    writeFileSync(
      props,
      [
        `bootstrap.servers=${cfg.host}:${cfg.ports.kafka}`,
        'group.id=kairos-connect',
        'key.converter=org.apache.kafka.connect.storage.StringConverter',
        'value.converter=org.apache.kafka.connect.converters.ByteArrayConverter',
        'config.storage.topic=_kairos-connect-configs',
        'offset.storage.topic=_kairos-connect-offsets',
        'status.storage.topic=_kairos-connect-status',
        'config.storage.replication.factor=1',
        'offset.storage.replication.factor=1',
        'status.storage.replication.factor=1',
        'offset.flush.interval.ms=1000',
        `listeners=http://${cfg.host}:${cfg.ports.connect}`,
        `rest.advertised.host.name=${cfg.host}`,
        `rest.advertised.port=${cfg.ports.connect}`,
        `plugin.path=${jars.plugins}`,
        // Connector JSON in connectors/ reads hosts and ports as ${env:KAIROS_*}, so the same
        // file works here and in docker-compose.
        'config.providers=env',
        'config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider',
        '',
      ].join('\n'),
    );
    return spawnDetached({
      name: 'connect',
      command: tools.java,
      args: [
        '-Xms256m',
        `-Xmx${cfg.heaps.connect}`,
        '-XX:+UseG1GC',
        `-Dlog4j2.configurationFile=${log4j}`,
        '-cp',
        jvmClasspath(jars.kafka),
        'org.apache.kafka.connect.cli.ConnectDistributed',
        props,
      ],
      env: {
        ...process.env,
        ...serviceUrls(cfg),
        KAIROS_PG_HOST: cfg.host,
        KAIROS_PG_PORT: String(cfg.ports.postgres),
      },
      logFile,
      pidFile,
    });
  },
};
