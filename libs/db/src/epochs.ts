import type pg from 'pg';

/**
 * Takes the next epoch of a job-events partition for `owner`. Durable and monotonic: every new
 * owner gets a strictly higher epoch than any before it, whatever crashed in between. The new
 * owner starts from its hot set: the previous owner's PostgreSQL-only mark goes.
 */
export async function takePartitionEpoch(
  db: Pick<pg.Pool, 'query'>,
  partition: number,
  owner: string,
): Promise<number> {
  const r = await db.query<{ epoch: number }>(
    `INSERT INTO partition_epochs (partition, epoch, owner) VALUES ($1, 1, $2)
     ON CONFLICT (partition) DO UPDATE
       SET epoch = partition_epochs.epoch + 1, owner = EXCLUDED.owner, updated_at = now(),
           postgres_only_since = NULL
     RETURNING epoch`,
    [partition, owner],
  );
  const epoch = r.rows[0]?.epoch;
  if (epoch === undefined) throw new Error(`no epoch returned for partition ${partition}`);
  return epoch;
}

/**
 * The owner of `epoch` takes the next epoch of its partition (Redis lost the partition's state),
 * only while it still owns it at that epoch: a new owner that took it meanwhile keeps it.
 * Returns the new epoch, or undefined when the partition was taken by then.
 */
export async function retakePartitionEpoch(
  db: Pick<pg.Pool, 'query'>,
  partition: number,
  owner: string,
  epoch: number,
): Promise<number | undefined> {
  const r = await db.query<{ epoch: number }>(
    `UPDATE partition_epochs SET epoch = epoch + 1, updated_at = now()
     WHERE partition = $1 AND owner = $2 AND epoch = $3
     RETURNING epoch`,
    [partition, owner, epoch],
  );
  const next = r.rows[0]?.epoch;
  return next === undefined ? undefined : Number(next);
}

/**
 * Marks the partition PostgreSQL-only (since now, kept if already marked) or clears the mark, as
 * the owner of `epoch`: a stale owner's write changes nothing. Returns whether it was written.
 */
export async function markPostgresOnly(
  db: Pick<pg.Pool, 'query'>,
  partition: number,
  epoch: number,
  postgresOnly: boolean,
): Promise<boolean> {
  const r = await db.query(
    `UPDATE partition_epochs
        SET postgres_only_since = CASE WHEN $3 THEN COALESCE(postgres_only_since, now()) END
      WHERE partition = $1 AND epoch = $2`,
    [partition, epoch, postgresOnly],
  );
  return (r.rowCount ?? 0) > 0;
}

/** A partition its owner runs from PostgreSQL alone (Redis out of memory). */
export interface PostgresOnlyPartition {
  readonly partition: number;
  readonly owner: string;
  readonly epoch: number;
  readonly since: Date;
}

/** The partitions marked PostgreSQL-only by their current owner, by partition. */
export async function postgresOnlyPartitions(db: Pick<pg.Pool, 'query'>): Promise<PostgresOnlyPartition[]> {
  const r = await db.query<{ partition: number; owner: string; epoch: string; since: Date }>(
    `SELECT partition, owner, epoch, postgres_only_since AS since FROM partition_epochs
      WHERE postgres_only_since IS NOT NULL ORDER BY partition`,
  );
  return r.rows.map((x) => ({
    partition: x.partition,
    owner: x.owner,
    epoch: Number(x.epoch),
    since: x.since,
  }));
}
