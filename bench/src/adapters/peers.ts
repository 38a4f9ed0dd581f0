import type { Adapter } from '../adapter.js';
import { BullmqAdapter } from './bullmq.js';
import { GraphileWorkerAdapter } from './graphile-worker.js';
import { PgBossAdapter } from './pg-boss.js';

export function peerAdapters(): Adapter[] {
  return [new BullmqAdapter(), new PgBossAdapter(), new GraphileWorkerAdapter()];
}
