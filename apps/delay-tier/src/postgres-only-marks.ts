import { markPostgresOnly, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';

/** The epoch this instance holds for a partition (acquiring it, or settled). */
export interface HeldEpochs {
  epoch(partition: number): Promise<number> | undefined;
}

/**
 * Shows in PostgreSQL (partition_epochs.postgres_only_since) which partitions run PostgreSQL-only,
 * for the API's overview. Display state: written in the background, each partition's changes in
 * order, under the owner's epoch (a stale owner's write changes nothing; a new epoch clears it);
 * a failure is logged, never thrown. A partition revoked while marked is cleared under the epoch
 * it was marked with (a no-op if a new owner took it: its epoch already cleared the mark).
 */
export class PostgresOnlyMarks {
  readonly #pool: Pool;
  readonly #epochs: HeldEpochs;
  readonly #log: Logger;
  readonly #chains = new Map<number, Promise<void>>();
  /** The epoch each marked partition was marked under. */
  readonly #markedUnder = new Map<number, number>();

  constructor(pool: Pool, epochs: HeldEpochs, log: Logger) {
    this.#pool = pool;
    this.#epochs = epochs;
    this.#log = log;
  }

  /** The partition entered (true) or left (false) PostgreSQL-only mode. */
  changed(partition: number, postgresOnly: boolean): void {
    const held = this.#epochs.epoch(partition);
    const prev = this.#chains.get(partition) ?? Promise.resolve();
    const next = prev
      .then(() => this.#write(partition, postgresOnly, held))
      .catch((err: unknown) =>
        this.#log.warn({ err, partition, postgresOnly }, 'could not show the partition mode in PostgreSQL'),
      )
      .finally(() => {
        if (this.#chains.get(partition) === next) this.#chains.delete(partition);
      });
    this.#chains.set(partition, next);
  }

  /**
   * On stop, once every write under way is done: clears the marks left (nobody dispatches those
   * partitions from here any more; a next owner's epoch would clear them too).
   */
  async stop(): Promise<void> {
    await this.#settled();
    for (const partition of this.#markedUnder.keys()) this.changed(partition, false);
    await this.#settled();
  }

  async #settled(): Promise<void> {
    while (this.#chains.size > 0) await Promise.allSettled([...this.#chains.values()]);
  }

  async #write(partition: number, postgresOnly: boolean, held: Promise<number> | undefined): Promise<void> {
    const epoch = held ? await held : this.#markedUnder.get(partition);
    if (epoch === undefined) return;
    await markPostgresOnly(this.#pool, partition, epoch, postgresOnly);
    if (postgresOnly) this.#markedUnder.set(partition, epoch);
    else this.#markedUnder.delete(partition);
  }
}
