import type pg from 'pg';

/**
 * Takes the next epoch of a job-events partition for `owner`. Durable and monotonic: every new
 * owner gets a strictly higher epoch than any before it, whatever crashed in between.
 */
export async function takePartitionEpoch(
  db: Pick<pg.Pool, 'query'>,
  partition: number,
  owner: string,
): Promise<number> {
  const r = await db.query<{ epoch: number }>(
    `INSERT INTO partition_epochs (partition, epoch, owner) VALUES ($1, 1, $2)
     ON CONFLICT (partition) DO UPDATE
       SET epoch = partition_epochs.epoch + 1, owner = EXCLUDED.owner, updated_at = now()
     RETURNING epoch`,
    [partition, owner],
  );
  const epoch = r.rows[0]?.epoch;
  if (epoch === undefined) throw new Error(`no epoch returned for partition ${partition}`);
  return epoch;
}
