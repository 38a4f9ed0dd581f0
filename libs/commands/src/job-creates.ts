import { KairosError, type Job } from '@kairos/core';
import {
  idempotencyMapKey,
  insertJobsCommitted,
  jobsOfIdempotencyKeys,
  type NewJobRow,
  type OutboxRow,
  type Pool,
} from '@kairos/db';

export interface CreateResult {
  readonly job: Job;
  /** False when an idempotency key matched an existing job, which is returned instead. */
  readonly created: boolean;
}

const keyOf = (r: NewJobRow) =>
  r.idempotencyKey === null ? undefined : idempotencyMapKey(r.tenantId, r.idempotencyKey);

/** The first row of each idempotency key (and every row without one), in order. */
export function firstOfEachKey(rows: readonly NewJobRow[]): NewJobRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const key = keyOf(r);
    if (key === undefined) return true;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Writes creates in one statement, its own transaction (job rows, keys and events at once: one
 * round trip), and answers each row in order. Within the list the first create of a key wins and
 * later ones get its job (`created: false`), as does a key that already had a job, read after the
 * commit. `events` holds the JobScheduled event of (at least) each first row, by job id. A throw
 * of the statement means nothing was committed; a failure to read the holders of keys afterwards
 * (the jobs committed, the answer unknown) is reported as a dependency failure to every caller of
 * the group, whose retry with the same idempotency key then gets its job.
 */
export async function writeCreates(
  pool: Pool,
  rows: readonly NewJobRow[],
  events: ReadonlyMap<string, OutboxRow>,
): Promise<CreateResult[]> {
  const unique = firstOfEachKey(rows);
  const outbox = unique.map((r) => {
    const event = events.get(r.id);
    if (!event) throw new Error(`create ${r.id} has no event to publish`);
    return event;
  });
  const winnerOfKey = new Map(
    unique.flatMap((r) => (r.idempotencyKey === null ? [] : [[keyOf(r), r] as const])),
  );
  const created = new Map((await insertJobsCommitted(pool, unique, outbox)).map((j) => [j.id, j]));
  const held = unique.flatMap((r) =>
    r.idempotencyKey !== null && !created.has(r.id)
      ? [{ tenantId: r.tenantId, idempotencyKey: r.idempotencyKey }]
      : [],
  );
  const originals = await jobsOfIdempotencyKeys(pool, held).catch((err: unknown) => {
    throw new KairosError(
      'DEPENDENCY_UNAVAILABLE',
      'the jobs were written; reading the holders of their keys failed',
      {
        cause: err,
      },
    );
  });
  return rows.map((row) => {
    const key = keyOf(row);
    const winner = key === undefined ? row : (winnerOfKey.get(key) ?? row);
    const job = created.get(winner.id) ?? (key === undefined ? undefined : originals.get(key));
    if (!job) throw new Error(`the job of create ${winner.id} vanished after its own commit`);
    return { job, created: winner === row && created.has(row.id) };
  });
}
