import { scheduledJobsPage, type Pool } from '@kairos/db';
import type { HotSet } from '@kairos/redis';
import { hotJob, hotRecordFromJob } from './record.js';

/** Jobs per Redis call while hydrating: a page goes in a few script runs of a few ms each. */
const HYDRATE_CHUNK = 250;

interface Cursor {
  /** Last row hydrated, in (due_at, id) order. */
  readonly after: { dueAt: Date; id: string } | null;
}

/**
 * The pre-loader: brings each owned partition's SCHEDULED jobs into the hot set as they come
 * within the lookahead window, in bounded pages ordered by due time on the (shard, due_at) index,
 * never a full scan. A per-partition cursor remembers how far it got; reset() makes the next run
 * a full rebuild of the window (new ownership, Redis lost its data, leaving PostgreSQL-only mode).
 *
 * Racing event consumption gives the same hot set: both go through the versioned apply-events script,
 * and the horizon is read on Redis TIME, the clock the event path's window check uses.
 */
export class Hydrator {
  readonly #cursors = new Map<number, Cursor>();
  /** Window each partition was last hydrated with (the pre-loader trims when it shrinks). */
  readonly #windows = new Map<number, number>();
  readonly #pool: Pool;
  readonly #hot: HotSet;
  readonly #pageSize: number;

  constructor(pool: Pool, hot: HotSet, pageSize: number) {
    this.#pool = pool;
    this.#hot = hot;
    this.#pageSize = pageSize;
  }

  reset(partition: number): void {
    this.#cursors.set(partition, { after: null });
  }

  forget(partition: number): void {
    this.#cursors.delete(partition);
    this.#windows.delete(partition);
  }

  /** The window the partition was last hydrated with; undefined before its first run. */
  windowOf(partition: number): number | undefined {
    return this.#windows.get(partition);
  }

  /**
   * The window shrank: rows between the new horizon and the cursor were trimmed from Redis, so
   * the cursor moves back to the horizon.
   */
  rewindTo(partition: number, horizonMs: number): void {
    const c = this.#cursors.get(partition);
    if (c?.after && c.after.dueAt.getTime() > horizonMs) {
      this.#cursors.set(partition, {
        after: { dueAt: new Date(horizonMs), id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' },
      });
    }
  }

  /** Hydrates the partition up to Redis time + windowMs; returns how many jobs entered the hot set. */
  async run(partition: number, epoch: number, windowMs: number): Promise<number> {
    this.#windows.set(partition, windowMs);
    const until = new Date((await this.#hot.serverTimeMs()) + windowMs);
    let after = (this.#cursors.get(partition) ?? { after: null }).after;
    let added = 0;
    for (;;) {
      const page = await scheduledJobsPage(this.#pool, partition, after, this.#pageSize, until);
      for (let i = 0; i < page.length; i += HYDRATE_CHUNK) {
        const events = page
          .slice(i, i + HYDRATE_CHUNK)
          .map((job) => ({ kind: 'schedule' as const, job: hotJob(hotRecordFromJob(job)) }));
        const outcomes = await this.#hot.applyEvents(partition, epoch, events, { windowMs, mode: 'hydrate' });
        added += outcomes.filter((o) => o === 'added').length;
      }
      const last = page.at(-1);
      if (last) {
        after = { dueAt: last.dueAt, id: last.id };
        this.#cursors.set(partition, { after });
      }
      if (page.length < this.#pageSize) return added;
    }
  }
}
