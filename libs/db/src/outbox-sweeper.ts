import type pg from 'pg';

/** Ids of outbox rows committed outside a transaction of their own, waiting to be deleted. */
const pending = new WeakMap<pg.Pool, OutboxSweep>();

/** How soon committed rows are deleted, ms: they only need to outlive their commit. */
const SWEEP_AFTER_MS = 100;
/** Rows older than this are deleted whoever wrote them (a process that died before its sweep). */
const ORPHAN_AGE = '10 minutes';
const ORPHAN_EVERY_MS = 10 * 60_000;

/**
 * Deletes, in batches soon after, outbox rows that were committed by a single statement (a create
 * is then one round trip instead of BEGIN, insert, delete, COMMIT): Debezium reads the insert from
 * the WAL at commit, so a later delete changes nothing it publishes. A failed delete is tried
 * again with the next batch; rows a crashed process left are deleted by age.
 */
class OutboxSweep {
  readonly #pool: pg.Pool;
  #ids: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #orphansAt = 0;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  add(ids: readonly string[]): void {
    this.#ids.push(...ids);
    if (!this.#timer) this.#arm();
  }

  async #sweep(): Promise<void> {
    const ids = this.#ids;
    this.#ids = [];
    try {
      await this.#pool.query({
        name: 'kairos-sweep-outbox',
        text: 'DELETE FROM outbox WHERE id = ANY($1::uuid[])',
        values: [ids],
      });
      if (Date.now() >= this.#orphansAt) {
        this.#orphansAt = Date.now() + ORPHAN_EVERY_MS;
        await this.#pool.query(`DELETE FROM outbox WHERE created_at < now() - interval '${ORPHAN_AGE}'`);
      }
    } catch {
      // PostgreSQL away or the pool ended: kept for the next batch (or the age sweep).
      this.#ids.unshift(...ids.slice(0, 100_000 - this.#ids.length));
    } finally {
      this.#timer = undefined;
      if (this.#ids.length > 0) this.#arm();
    }
  }

  #arm(): void {
    this.#timer = setTimeout(() => void this.#sweep(), SWEEP_AFTER_MS).unref();
  }
}

/** Outbox rows were committed on `pool` by a statement of their own: delete them soon. */
export function sweepOutboxSoon(pool: pg.Pool, ids: readonly string[]): void {
  if (ids.length === 0) return;
  let sweep = pending.get(pool);
  if (!sweep) {
    sweep = new OutboxSweep(pool);
    pending.set(pool, sweep);
  }
  sweep.add(ids);
}
