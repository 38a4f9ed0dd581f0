import type { JobSearch } from '@kairos/core';
import type pg from 'pg';
import { searchWhere } from './job-search.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

export type ReplayState = 'RUNNING' | 'DONE' | 'CANCELLED';

export interface Replay {
  readonly id: string;
  readonly tenant: string;
  readonly filter: Record<string, unknown>;
  readonly ratePerSec: number;
  readonly state: ReplayState;
  readonly selected: number;
  readonly replayed: number;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
  readonly owner: string | null;
  readonly heartbeatAt: Date | null;
}

interface Row {
  id: string;
  tenant_id: string;
  filter: Record<string, unknown>;
  rate_per_sec: number;
  state: ReplayState;
  selected: number;
  replayed: number;
  created_by: string;
  created_at: Date;
  finished_at: Date | null;
  owner: string | null;
  heartbeat_at: Date | null;
}

const toReplay = (r: Row): Replay => ({
  id: r.id,
  tenant: r.tenant_id,
  filter: r.filter,
  ratePerSec: r.rate_per_sec,
  state: r.state,
  selected: r.selected,
  replayed: r.replayed,
  createdBy: r.created_by,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  owner: r.owner,
  heartbeatAt: r.heartbeat_at,
});

/** The dead letters a search selects: its filters, FAILED only, oldest first, at most `max`. */
function selection(search: JobSearch, max: number): { sql: string; values: unknown[] } {
  const where = searchWhere({ ...search, states: ['FAILED'], after: undefined });
  where.values.push(max);
  return {
    sql: `SELECT id, type, resource_class, tenant_id FROM jobs WHERE ${where.sql}
          ORDER BY created_at, id LIMIT $${where.values.length}`,
    values: where.values,
  };
}

export interface ReplayPreview {
  readonly total: number;
  readonly groups: { type: string; resourceClass: string; tenant: string; count: number }[];
  readonly sample: string[];
}

/** What a replay of this search would send: counts by type, class and tenant, and a sample. */
export async function previewReplay(db: Queryable, search: JobSearch, max: number): Promise<ReplayPreview> {
  const s = selection(search, max);
  const r = await db.query<{
    type: string;
    resource_class: string;
    tenant_id: string;
    n: string;
    sample: string[];
  }>(
    `SELECT type, resource_class, tenant_id, count(*) AS n, (array_agg(id ORDER BY id))[1:5]::text[] AS sample
     FROM (${s.sql}) sel GROUP BY type, resource_class, tenant_id ORDER BY count(*) DESC, type`,
    s.values,
  );
  const groups = r.rows.map((x) => ({
    type: x.type,
    resourceClass: x.resource_class,
    tenant: x.tenant_id,
    count: Number(x.n),
  }));
  return {
    total: groups.reduce((n, g) => n + g.count, 0),
    groups,
    sample: r.rows.flatMap((x) => x.sample).slice(0, 10),
  };
}

/** Creates a replay and freezes its selection (run in a transaction). */
export async function insertReplay(
  tx: Queryable,
  r: { id: string; tenant: string; filter: object; ratePerSec: number; createdBy: string },
  search: JobSearch,
  max: number,
): Promise<Replay> {
  await tx.query(
    `INSERT INTO replays (id, tenant_id, filter, rate_per_sec, state, selected, created_by)
     VALUES ($1, $2, $3, $4, 'RUNNING', 0, $5)`,
    [r.id, r.tenant, JSON.stringify(r.filter), r.ratePerSec, r.createdBy],
  );
  const s = selection(search, max);
  s.values.push(r.id);
  await tx.query(
    `INSERT INTO replay_items (replay_id, job_id) SELECT $${s.values.length}::uuid, id FROM (${s.sql}) sel`,
    s.values,
  );
  const done = await tx.query<Row>(
    `UPDATE replays SET selected = (SELECT count(*) FROM replay_items WHERE replay_id = $1) WHERE id = $1 RETURNING *`,
    [r.id],
  );
  return toReplay(done.rows[0]!);
}

export async function findReplay(db: Queryable, id: string): Promise<Replay | undefined> {
  const r = await db.query<Row>('SELECT * FROM replays WHERE id = $1', [id]);
  return r.rows[0] && toReplay(r.rows[0]);
}

/** A tenant's replays (undefined: every tenant's), newest first. */
export async function listReplays(
  db: Queryable,
  tenant: string | undefined,
  limit: number,
): Promise<Replay[]> {
  const r = await db.query<Row>(
    'SELECT * FROM replays WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY created_at DESC LIMIT $2',
    [tenant ?? null, limit],
  );
  return r.rows.map(toReplay);
}

/**
 * Takes a running replay for `owner`: its own, an unowned one, or one whose owner's heartbeat is
 * older than `staleMs` (that owner died). Returns the replay, or undefined when another live
 * runner holds it or it is no longer running.
 */
export async function claimReplay(
  db: Queryable,
  id: string,
  owner: string,
  staleMs: number,
): Promise<Replay | undefined> {
  const r = await db.query<Row>(
    `UPDATE replays SET owner = $2, heartbeat_at = now()
     WHERE id = $1 AND state = 'RUNNING'
       AND (owner IS NULL OR owner = $2 OR heartbeat_at < now() - $3 * interval '1 millisecond')
     RETURNING *`,
    [id, owner, staleMs],
  );
  return r.rows[0] && toReplay(r.rows[0]);
}

/** Running replays no live runner holds (their heartbeat is older than `staleMs`, or none). */
export async function orphanReplays(db: Queryable, staleMs: number): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    `SELECT id FROM replays WHERE state = 'RUNNING'
       AND (heartbeat_at IS NULL OR heartbeat_at < now() - $1 * interval '1 millisecond')`,
    [staleMs],
  );
  return r.rows.map((x) => x.id);
}

/**
 * Locks the replay for its owner and takes up to `n` items not replayed yet (run in the
 * transaction that replays them). Empty when the replay is no longer this owner's or running.
 */
export async function takeReplayItems(
  tx: Queryable,
  id: string,
  owner: string,
  n: number,
): Promise<string[]> {
  const held = await tx.query(
    `SELECT 1 FROM replays WHERE id = $1 AND owner = $2 AND state = 'RUNNING' FOR UPDATE`,
    [id, owner],
  );
  if (held.rowCount === 0) return [];
  const r = await tx.query<{ job_id: string }>(
    `SELECT job_id FROM replay_items WHERE replay_id = $1 AND new_job_id IS NULL
     ORDER BY job_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [id, n],
  );
  return r.rows.map((x) => x.job_id);
}

/** Records items as replayed by their new jobs, and the replay's progress and heartbeat. */
export async function markReplayed(
  tx: Queryable,
  id: string,
  done: readonly { jobId: string; newJobId: string | null }[],
): Promise<void> {
  await tx.query(
    `UPDATE replay_items i SET new_job_id = d.new_id, replayed_at = now()
     FROM unnest($2::uuid[], $3::uuid[]) AS d(job_id, new_id)
     WHERE i.replay_id = $1 AND i.job_id = d.job_id`,
    [id, done.map((d) => d.jobId), done.map((d) => d.newJobId ?? '00000000-0000-0000-0000-000000000000')],
  );
  await tx.query('UPDATE replays SET replayed = replayed + $2, heartbeat_at = now() WHERE id = $1', [
    id,
    done.length,
  ]);
}

/** Ends a running replay (DONE or CANCELLED); false when it had ended already. */
export async function endReplay(
  tx: Queryable,
  id: string,
  state: 'DONE' | 'CANCELLED',
): Promise<Replay | undefined> {
  const r = await tx.query<Row>(
    `UPDATE replays SET state = $2, finished_at = now(), owner = NULL WHERE id = $1 AND state = 'RUNNING' RETURNING *`,
    [id, state],
  );
  return r.rows[0] && toReplay(r.rows[0]);
}

export interface AuditEntry {
  readonly action: string;
  readonly actor: string;
  readonly at: Date;
  readonly detail: Record<string, unknown>;
}

export async function appendReplayAudit(
  db: Queryable,
  id: string,
  action: 'created' | 'resumed' | 'cancelled' | 'done',
  actor: string,
  detail: object,
): Promise<void> {
  await db.query('INSERT INTO replay_audit (replay_id, action, actor, detail) VALUES ($1, $2, $3, $4)', [
    id,
    action,
    actor,
    JSON.stringify(detail),
  ]);
}

export async function replayAudit(db: Queryable, id: string): Promise<AuditEntry[]> {
  const r = await db.query<{ action: string; actor: string; at: Date; detail: Record<string, unknown> }>(
    'SELECT action, actor, at, detail FROM replay_audit WHERE replay_id = $1 ORDER BY id',
    [id],
  );
  return r.rows;
}

/** Sets `replay_of` on new jobs (the replayed or re-run job each copies). */
export async function setReplayOf(
  tx: Queryable,
  pairs: readonly { id: string; of: string }[],
): Promise<void> {
  if (pairs.length === 0) return;
  await tx.query(
    `UPDATE jobs j SET replay_of = p.of FROM unnest($1::uuid[], $2::uuid[]) AS p(id, of) WHERE j.id = p.id`,
    [pairs.map((p) => p.id), pairs.map((p) => p.of)],
  );
}

/** Gives up the running replays an owner holds (it is stopping): the next runner takes them at once. */
export async function releaseReplays(db: Queryable, owner: string): Promise<void> {
  await db.query(`UPDATE replays SET owner = NULL WHERE owner = $1 AND state = 'RUNNING'`, [owner]);
}
