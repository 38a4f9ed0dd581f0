import { connect } from './connect.js';
import { kafka } from './kafka.js';
import { kafkaCluster } from './kafka-cluster.js';
import { postgres } from './postgres.js';
import { prometheus } from './prometheus.js';
import { redis } from './redis.js';
import { redisCluster } from './redis-cluster.js';
import { registry } from './registry.js';
import type { ServiceDef, ServiceName } from './types.js';

/** In start order; `down` walks it backwards. */
export const SERVICES: readonly ServiceDef[] = [postgres, redis, kafka, registry, connect];

/** Started only when asked (`up --with NAME`, KAIROS_STACK_WITH); `down` stops them first. */
export const OPTIONAL_SERVICES: readonly ServiceDef[] = [prometheus, redisCluster, kafkaCluster];

export function serviceByName(name: string): ServiceDef {
  const all = [...SERVICES, ...OPTIONAL_SERVICES];
  const s = all.find((x) => x.name === name);
  if (!s) throw new RangeError(`unknown service "${name}"; one of: ${all.map((x) => x.name).join(', ')}`);
  return s;
}

export type { ServiceDef, ServiceName };
export { REGISTRY_DATABASE } from './registry.js';
