import { queuedAttempts, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';

/**
 * Before a partition's hot set is rebuilt: if Redis lost its attempts (or never had them marked),
 * writes back those PostgreSQL holds as dispatched and not started and marks the partition
 * restored under `epoch`, so a worker's claim refuses any older task Redis no longer knows (a
 * finished job never runs again). Nothing to do when the partition's state survived (a handover).
 * Runs under a new epoch: dispatches of the old one committed before it was taken.
 */
export async function restoreAttempts(
  pool: Pool,
  hot: HotSet,
  log: Logger,
  partition: number,
  epoch: number,
): Promise<void> {
  if (await hot.restored(partition)) return;
  const queued = await queuedAttempts(pool, partition);
  const written = await hot.restoreAttempts(partition, epoch, queued);
  log.info({ partition, epoch, queued: queued.length, written }, 'attempts restored from PostgreSQL');
}
