import { rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { kafkaClusterNodes, type StackConfig } from './config.js';
import { isAlive, readPid } from './proc.js';
import { kafkaClusterNodeDir } from './services/kafka-cluster.js';
import { waitFor } from './wait.js';

function nodeDir(cfg: StackConfig, id: number): string {
  if (!kafkaClusterNodes(cfg).some((n) => n.id === id))
    throw new RangeError(`the Kafka cluster has nodes 1-${kafkaClusterNodes(cfg).length}, not ${id}`);
  return kafkaClusterNodeDir(cfg, id);
}

/**
 * Crashes one node of the stack's three-broker Kafka (`--with kafka-cluster`), as a power loss
 * would: SIGKILL to its JVM alone, the other two run on. Its supervisor starts it again a second
 * later, or, with `hold`, once `releaseKafkaClusterNode` is called. Waits until it is gone; returns
 * the pid killed. For chaos and cluster tests.
 */
export async function crashKafkaClusterNode(
  cfg: StackConfig,
  id: number,
  o: { hold?: boolean } = {},
): Promise<number> {
  const dir = nodeDir(cfg, id);
  const pid = readPid(resolve(dir, 'pid'));
  if (pid === undefined || !isAlive(pid)) throw new Error(`Kafka cluster node ${id} is not running`);
  if (o.hold) writeFileSync(resolve(dir, 'hold'), 'held down by crashKafkaClusterNode\n');
  process.kill(pid, 'SIGKILL');
  await waitFor(`Kafka cluster node ${id} to die`, () => Promise.resolve(!isAlive(pid)), {
    timeoutMs: 10_000,
  });
  return pid;
}

/** Lets a node crashed with `hold` start again (its supervisor checks every 200 ms). */
export function releaseKafkaClusterNode(cfg: StackConfig, id: number): void {
  rmSync(resolve(nodeDir(cfg, id), 'hold'), { force: true });
}
