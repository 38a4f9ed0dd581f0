import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { dirs, kafkaClusterBrokers, kafkaClusterNodes, type StackConfig } from '../config.js';
import { spawnDetached } from '../proc.js';
import { describeKafka, jvmClasspath } from './kafka.js';
import { writeLog4j2Config } from './log4j.js';
import type { ServiceDef } from './types.js';

/** Each node's heap: three of them stay under the single broker's and Connect's together. */
const NODE_HEAP = '320m';

type Node = ReturnType<typeof kafkaClusterNodes>[number];

/** One node's folder: its server.properties, log4j config, data, and the pid of its JVM. */
export const kafkaClusterNodeDir = (cfg: StackConfig, id: number) =>
  resolve(dirs(cfg).kafkaCluster, `node${id}`);

/**
 * A combined broker and KRaft controller, one of three voters, with the durability a production
 * cluster has: every topic three copies by default, writes with acks=all need two, no unclean
 * election. A dead broker is fenced after 4 s (the default 9 s only makes failover slower here).
 */
function nodeProperties(cfg: StackConfig, node: Node): string {
  const { host } = cfg;
  const voters = kafkaClusterNodes(cfg).map((n) => `${n.id}@${host}:${n.controllerPort}`);
  return [
    'process.roles=broker,controller',
    `node.id=${node.id}`,
    `controller.quorum.voters=${voters.join(',')}`,
    `listeners=PLAINTEXT://${host}:${node.port},CONTROLLER://${host}:${node.controllerPort}`,
    `advertised.listeners=PLAINTEXT://${host}:${node.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${resolve(kafkaClusterNodeDir(cfg, node.id), 'data')}`,
    'num.partitions=1',
    'default.replication.factor=3',
    'min.insync.replicas=2',
    'unclean.leader.election.enable=false',
    'offsets.topic.replication.factor=3',
    'offsets.topic.num.partitions=8',
    'transaction.state.log.replication.factor=3',
    'transaction.state.log.min.isr=2',
    'share.coordinator.state.topic.replication.factor=3',
    'share.coordinator.state.topic.min.isr=2',
    'broker.heartbeat.interval.ms=1000',
    'broker.session.timeout.ms=4000',
    'replica.lag.time.max.ms=10000',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'delete.topic.enable=true',
    '',
  ].join('\n');
}

/** The shell function that formats a node's storage once and keeps its JVM running. */
function superviseFunction(java: string, classpath: string): string {
  const jvm = (dir: string) => `-Dlog4j2.configurationFile=${dir}/log4j2.properties -cp '${classpath}'`;
  return [
    'run_node() {',
    '  dir=$1',
    `  if [ ! -e "$dir/data/meta.properties" ]; then`,
    `    ${java} ${jvm('$dir')} kafka.tools.StorageTool format --cluster-id="$(cat cluster-id)" -c "$dir/server.properties" || exit 1`,
    '  fi',
    '  while :; do',
    // A test holds a killed node down (drops `hold` in its folder) to run on two brokers for a while.
    '    while [ -e "$dir/hold" ]; do sleep 0.2; done',
    `    ${java} -Xms128m -Xmx${NODE_HEAP} -XX:+UseG1GC ${jvm('$dir')} kafka.Kafka "$dir/server.properties" &`,
    '    echo $! > "$dir/pid"',
    '    wait $!',
    '    echo "kafka-cluster: $dir exited ($?); starting it again"',
    '    sleep 1',
    '  done',
    '}',
  ].join('\n');
}

/**
 * The script the service runs: the three nodes, each kept running by a loop as a service manager
 * would (a killed node comes back), in one process group so `down` and `crash` reach them all.
 * On TERM it waits for the JVMs' clean shutdown, so a following `up` finds the ports free.
 */
function runScript(cfg: StackConfig, java: string, classpath: string): string {
  const nodes = kafkaClusterNodes(cfg).map((n) => kafkaClusterNodeDir(cfg, n.id));
  return [
    '#!/bin/sh',
    '# Written by `npm run stack -- up --with kafka-cluster` at every start.',
    superviseFunction(java, classpath),
    `trap 'for d in ${nodes.join(' ')}; do p=$(cat "$d/pid" 2>/dev/null); while [ -n "$p" ] && kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done; exit 0' TERM INT`,
    ...nodes.map((d) => `run_node ${d} &`),
    'wait',
    '',
  ].join('\n');
}

/**
 * A three-broker Kafka (optional: `up --with kafka-cluster`): three combined KRaft nodes that
 * are each other's controller quorum, every topic replicated three times with
 * min.insync.replicas=2, small heaps. Kairos uses it when KAIROS_KAFKA_BROKERS lists its brokers
 * (KAIROS_KAFKA_CLUSTER_BROKERS of `npm run stack -- env`).
 */
export const kafkaCluster: ServiceDef = {
  name: 'kafka-cluster',
  dependsOn: [],
  startTimeoutMs: 180_000,
  listens: (cfg) =>
    `${kafkaClusterBrokers(cfg)} (controllers ${kafkaClusterNodes(cfg)
      .map((n) => n.controllerPort)
      .join(', ')})`,
  /** Healthy = every broker registered and unfenced (metadata lists only those). */
  async healthy(cfg) {
    const k = await describeKafka(kafkaClusterBrokers(cfg).split(','));
    return k?.brokers === kafkaClusterNodes(cfg).length;
  },
  start({ cfg, tools, jars, logFile, pidFile }) {
    const base = dirs(cfg).kafkaCluster;
    mkdirSync(base, { recursive: true });
    const idFile = resolve(base, 'cluster-id');
    // One id for the three storages, made once: a node formatted with another would be refused.
    if (!existsSync(idFile) || readFileSync(idFile, 'utf8').trim() === '')
      writeFileSync(idFile, randomBytes(16).toString('base64url'));
    for (const node of kafkaClusterNodes(cfg)) {
      const dir = kafkaClusterNodeDir(cfg, node.id);
      mkdirSync(dir, { recursive: true });
      rmSync(resolve(dir, 'hold'), { force: true }); // left by a test that did not finish
      writeFileSync(resolve(dir, 'server.properties'), nodeProperties(cfg, node));
      writeLog4j2Config(resolve(dir, 'log4j2.properties'), `node${node.id}`);
    }
    const script = resolve(base, 'run.sh');
    writeFileSync(script, runScript(cfg, tools.java, jvmClasspath(jars.kafka)), { mode: 0o755 });
    return spawnDetached({
      name: 'kafka-cluster',
      command: '/bin/sh',
      args: [script],
      cwd: base,
      logFile,
      pidFile,
    });
  },
};
