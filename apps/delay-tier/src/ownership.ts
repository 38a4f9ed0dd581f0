import { partitionOwner, scheduledJobsPage, takePartitionEpoch, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import { hotRecordFromJob } from './record.js';

const REBUILD_PAGE = 1000;

/**
 * The partitions this instance owns and the epoch it holds for each. On assignment it takes a
 * new epoch from PostgreSQL (durable, monotonic), raises Redis's copy to it (which fences any
 * previous owner's scripts) and rebuilds the partition's hot set from PostgreSQL, so nothing
 * depends on what Redis or the previous owner kept. Taking is retried while the partition stays
 * assigned; a PostgreSQL blip never leaves an assigned partition unowned.
 */
export class Ownership {
  readonly #epochs = new Map<number, Promise<number>>();
  readonly #recovering = new Map<number, Promise<void>>();
  readonly #pool: Pool;
  readonly #hot: HotSet;
  readonly #owner: string;
  readonly #log: Logger;

  constructor(pool: Pool, hot: HotSet, owner: string, log: Logger) {
    this.#pool = pool;
    this.#hot = hot;
    this.#owner = owner;
    this.#log = log;
  }

  /** Applies a new assignment: takes epochs for new partitions, forgets revoked ones. */
  assign(partitions: readonly number[]): void {
    const wanted = new Set(partitions);
    for (const p of this.#epochs.keys()) if (!wanted.has(p)) this.#epochs.delete(p);
    for (const p of wanted) if (!this.#epochs.has(p)) this.#start(p);
  }

  /** The epoch held for a partition (awaiting its acquisition), or undefined if not owned. */
  epoch(partition: number): Promise<number> | undefined {
    return this.#epochs.get(partition);
  }

  owned(): number[] {
    return [...this.#epochs.keys()].sort((a, b) => a - b);
  }

  /**
   * A script said our epoch is stale. Either another instance owns the partition now (stop
   * acting for it) or Redis lost its data while we still own it (restore the epoch, rebuild).
   */
  onStale(partition: number, epoch: number): Promise<void> {
    // Many scripts of one partition fail at once: check and rebuild only once.
    let recovery = this.#recovering.get(partition);
    if (!recovery) {
      recovery = this.#recover(partition, epoch).finally(() => this.#recovering.delete(partition));
      this.#recovering.set(partition, recovery);
    }
    return recovery;
  }

  async #recover(partition: number, epoch: number): Promise<void> {
    if (this.#epochs.get(partition) === undefined) return;
    const durable = await partitionOwner(this.#pool, partition);
    if (
      durable?.owner === this.#owner &&
      durable.epoch === epoch &&
      (await this.#hot.currentEpoch(partition)) === undefined
    ) {
      this.#log.warn({ partition, epoch }, 'Redis lost the partition state; rebuilding it from PostgreSQL');
      await this.#hot.setEpoch(partition, epoch);
      await this.#rebuild(partition, epoch);
      return;
    }
    this.#log.warn(
      { partition, epoch, owner: durable?.owner },
      'partition epoch is stale: another instance owns it',
    );
    this.#epochs.delete(partition);
  }

  #start(partition: number): void {
    const taking = this.#take(partition, () => this.#epochs.get(partition) === taking);
    taking.catch(() => undefined); // observed by whoever awaits epoch(p)
    this.#epochs.set(partition, taking);
  }

  async #take(partition: number, stillMine: () => boolean): Promise<number> {
    for (let delay = 200; ; delay = Math.min(delay * 2, 5000)) {
      try {
        const epoch = await takePartitionEpoch(this.#pool, partition, this.#owner);
        // Revoked while we waited: a newer owner may already be writing; do not touch Redis.
        if (!stillMine()) throw new Error(`partition ${partition} was revoked while taking its epoch`);
        await this.#hot.setEpoch(partition, epoch);
        await this.#rebuild(partition, epoch);
        return epoch;
      } catch (err) {
        if (!stillMine()) throw err;
        this.#log.warn({ err, partition }, 'could not take the partition yet; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Puts every SCHEDULED job of the partition into its hot set, in bounded pages by due time. */
  async #rebuild(partition: number, epoch: number): Promise<number> {
    let after: { dueAt: Date; id: string } | null = null;
    let added = 0;
    const t0 = Date.now();
    for (;;) {
      const page = await scheduledJobsPage(this.#pool, partition, after, REBUILD_PAGE);
      const results = await Promise.all(
        page.map((job) =>
          this.#hot.schedule(partition, epoch, {
            jobId: job.id,
            dueAtMs: job.dueAt.getTime(),
            version: job.version,
            record: JSON.stringify(hotRecordFromJob(job)),
          }),
        ),
      );
      added += results.filter(Boolean).length;
      const last = page.at(-1);
      if (!last || page.length < REBUILD_PAGE) break;
      after = { dueAt: last.dueAt, id: last.id };
    }
    if (added > 0)
      this.#log.info({ partition, epoch, added, ms: Date.now() - t0 }, 'hot set rebuilt from PostgreSQL');
    return added;
  }
}
