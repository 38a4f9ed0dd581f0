import { takePartitionEpoch, type Pool } from '@kairos/db';
import type { HotSet } from '@kairos/redis';

/**
 * The partitions this instance owns and the epoch it holds for each. A partition's epoch is
 * taken from PostgreSQL (durable, monotonic) when it is assigned and written to Redis, which
 * fences any previous owner's scripts from then on.
 */
export class Ownership {
  readonly #epochs = new Map<number, Promise<number>>();
  readonly #pool: Pool;
  readonly #hot: HotSet;
  readonly #owner: string;

  constructor(pool: Pool, hot: HotSet, owner: string) {
    this.#pool = pool;
    this.#hot = hot;
    this.#owner = owner;
  }

  /** Applies a new assignment: takes epochs for new partitions, forgets revoked ones. */
  assign(partitions: readonly number[]): void {
    const wanted = new Set(partitions);
    for (const p of this.#epochs.keys()) if (!wanted.has(p)) this.#epochs.delete(p);
    for (const p of wanted) {
      if (this.#epochs.has(p)) continue;
      const taking = this.#take(p).catch((err: unknown) => {
        // Not owned after all (e.g. PostgreSQL unreachable): the next use or rebalance retries.
        if (this.#epochs.get(p) === taking) this.#epochs.delete(p);
        throw err;
      });
      taking.catch(() => undefined); // observed by whoever awaits epoch(p)
      this.#epochs.set(p, taking);
    }
  }

  /** The epoch held for a partition (awaiting its acquisition), or undefined if not owned. */
  epoch(partition: number): Promise<number> | undefined {
    return this.#epochs.get(partition);
  }

  /** Stop acting for a partition (its epoch went stale: someone else owns it now). */
  lose(partition: number): void {
    this.#epochs.delete(partition);
  }

  owned(): number[] {
    return [...this.#epochs.keys()].sort((a, b) => a - b);
  }

  async #take(partition: number): Promise<number> {
    const epoch = await takePartitionEpoch(this.#pool, partition, this.#owner);
    await this.#hot.setEpoch(partition, epoch);
    return epoch;
  }
}
