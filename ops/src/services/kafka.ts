import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { logLevel } from 'kafkajs';
import { createKafka } from '@kairos/kafka';
import { dirs, type StackConfig } from '../config.js';
import { spawnDetached } from '../proc.js';
import { writeLog4j2Config } from './log4j.js';
import {
  kafkaSecurityFiles,
  saslSslProperties,
  scramAlterArgs,
  scramFormatArgs,
  type KafkaSecurityFiles,
} from './kafka-security.js';
import type { ServiceDef } from './types.js';

const scramMarker = (sec: KafkaSecurityFiles) => resolve(sec.dir, 'scram-users');

export function jvmClasspath(dir: string): string {
  return `${dir}/*`;
}

function serverProperties(cfg: StackConfig, logDir: string, sec: KafkaSecurityFiles): string {
  const { host } = cfg;
  const plain = `PLAINTEXT://${host}:${cfg.ports.kafka}`;
  const secure = `SASL_SSL://${host}:${cfg.ports.kafkaSecure}`;
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${host}:${cfg.ports.kafkaController}`,
    `listeners=${plain},${secure},CONTROLLER://${host}:${cfg.ports.kafkaController}`,
    `advertised.listeners=${plain},${secure}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL',
    ...saslSslProperties(sec),
    `log.dirs=${logDir}`,
    'num.partitions=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=8',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    // One broker on a laptop: no reason to make the first consumer group wait 3 s.
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'delete.topic.enable=true',
    '',
  ].join('\n');
}

/** How many brokers the cluster at `brokers` reports, and whether it names a controller; undefined if it does not answer. */
export async function describeKafka(
  brokers: readonly string[],
): Promise<{ brokers: number; controller: boolean } | undefined> {
  const admin = createKafka({
    brokers,
    clientId: 'kairos-stack-health',
    connectionTimeoutMs: 1000,
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return { brokers: cluster.brokers.length, controller: cluster.controller !== null };
  } catch {
    return undefined;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export const kafka: ServiceDef = {
  name: 'kafka',
  dependsOn: [],
  startTimeoutMs: 120_000,
  listens: (cfg) =>
    `${cfg.host}:${cfg.ports.kafka}, SASL_SSL ${cfg.host}:${cfg.ports.kafkaSecure} (controller ${cfg.host}:${cfg.ports.kafkaController})`,
  async healthy(cfg) {
    const k = await describeKafka([`${cfg.host}:${cfg.ports.kafka}`]);
    return k !== undefined && k.brokers > 0 && k.controller;
  },
  start({ cfg, tools, jars, logFile, pidFile }) {
    const base = dirs(cfg).kafka;
    const logDir = resolve(base, 'data');
    const confDir = resolve(base, 'config');
    mkdirSync(confDir, { recursive: true });
    const props = resolve(confDir, 'server.properties');
    const log4j = resolve(confDir, 'log4j2.properties');
    const sec = kafkaSecurityFiles(base, cfg.host);
    writeFileSync(props, serverProperties(cfg, logDir, sec));
    writeLog4j2Config(log4j);
    const jvm = [`-Dlog4j2.configurationFile=${log4j}`, '-cp', jvmClasspath(jars.kafka)];
    if (!existsSync(resolve(logDir, 'meta.properties'))) {
      const clusterId = randomBytes(16).toString('base64url');
      // `--cluster-id=<id>`, not `-t <id>`: one id in 64 starts with '-', which argparse takes for an option.
      const format = spawnSync(
        tools.java,
        [
          ...jvm,
          'kafka.tools.StorageTool',
          'format',
          `--cluster-id=${clusterId}`,
          '-c',
          props,
          ...scramFormatArgs(sec),
        ],
        { encoding: 'utf8' },
      );
      if (format.status !== 0)
        throw new Error(`kafka storage format failed: ${format.stderr || format.stdout}`);
      writeFileSync(scramMarker(sec), 'created when the storage was formatted\n');
    }
    return spawnDetached({
      name: 'kafka',
      command: tools.java,
      args: [`-Xms256m`, `-Xmx${cfg.heaps.kafka}`, '-XX:+UseG1GC', ...jvm, 'kafka.Kafka', props],
      logFile,
      pidFile,
    });
  },
  /** A storage formatted before the SASL_SSL listener existed gets its SCRAM user now, once. */
  ready({ cfg, tools, jars }) {
    const sec = kafkaSecurityFiles(dirs(cfg).kafka, cfg.host);
    if (existsSync(scramMarker(sec))) return Promise.resolve();
    for (const args of scramAlterArgs(sec, `${cfg.host}:${cfg.ports.kafka}`)) {
      const out = spawnSync(
        tools.java,
        ['-cp', jvmClasspath(jars.kafka), 'kafka.admin.ConfigCommand', ...args],
        {
          encoding: 'utf8',
        },
      );
      if (out.status !== 0) throw new Error(`adding the SCRAM user failed: ${out.stderr || out.stdout}`);
    }
    writeFileSync(scramMarker(sec), 'added by ConfigCommand\n');
    return Promise.resolve();
  },
};
