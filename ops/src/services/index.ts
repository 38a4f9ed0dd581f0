import { connect } from './connect.js';
import { kafka } from './kafka.js';
import { postgres } from './postgres.js';
import { redis } from './redis.js';
import { registry } from './registry.js';
import type { ServiceDef, ServiceName } from './types.js';

/** In start order; `down` walks it backwards. */
export const SERVICES: readonly ServiceDef[] = [postgres, redis, kafka, registry, connect];

export function serviceByName(name: string): ServiceDef {
  const s = SERVICES.find((x) => x.name === name);
  if (!s)
    throw new RangeError(`unknown service "${name}"; one of: ${SERVICES.map((x) => x.name).join(', ')}`);
  return s;
}

export type { ServiceDef, ServiceName };
export { REGISTRY_DATABASE } from './registry.js';
