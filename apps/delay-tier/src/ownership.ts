import { isKairosError } from '@kairos/core';
import { partitionOwner, retakePartitionEpoch, takePartitionEpoch, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';

export interface OwnershipHooks {
  /** Rebuilds the partition's hot set from PostgreSQL (Redis holds the epoch already). */
  rebuild(partition: number, epoch: number): Promise<void>;
  /** Redis refused a write for the partition: the REDIS_OOM policy (fallBackOnOom) applies. */
  onOom(partition: number): void;
  onEpoch?(partition: number, epoch: number): void;
  onRevoked?(partition: number): void;
  /** The partition's hot set is whole again (taken, or recovered from Redis losing it). */
  onReady?(partition: number): void;
}

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
  /** Epochs acquired (the promise settled), for status reports. */
  readonly #held = new Map<number, number>();
  readonly #pool: Pool;
  readonly #hot: HotSet;
  readonly #owner: string;
  readonly #log: Logger;
  readonly #hooks: OwnershipHooks;
  #suspended = false;

  constructor(pool: Pool, hot: HotSet, owner: string, log: Logger, hooks: OwnershipHooks) {
    this.#pool = pool;
    this.#hot = hot;
    this.#owner = owner;
    this.#log = log;
    this.#hooks = hooks;
  }

  /** Applies a new assignment: takes epochs for new partitions, forgets revoked ones. */
  assign(partitions: readonly number[]): void {
    const wanted = new Set(partitions);
    for (const p of [...this.#epochs.keys()]) {
      if (!wanted.has(p)) {
        this.#epochs.delete(p);
        this.#hooks.onRevoked?.(p);
      }
    }
    for (const p of wanted) if (!this.#epochs.has(p)) this.#start(p);
    this.#suspended = false;
  }

  /**
   * A rebalance started: dispatch nothing until the new assignment is known, so a partition
   * moving away stops dispatching here before its new owner starts. (The PostgreSQL epoch row,
   * held by every dispatch transaction, enforces the same even if this notice comes late.)
   */
  suspend(): void {
    this.#suspended = true;
  }

  /** The epoch held for a partition (awaiting its acquisition), or undefined if not owned. */
  epoch(partition: number): Promise<number> | undefined {
    return this.#epochs.get(partition);
  }

  /** The epoch held for a partition once acquired; undefined while taking it or when not owned. */
  heldEpoch(partition: number): number | undefined {
    return this.#epochs.has(partition) ? this.#held.get(partition) : undefined;
  }

  owned(): number[] {
    return [...this.#epochs.keys()].sort((a, b) => a - b);
  }

  /** Owned partitions that may dispatch now (none during a rebalance). */
  dispatchable(): number[] {
    // A partition being rebuilt dispatches again once its hot set is whole.
    return this.#suspended ? [] : this.owned().filter((p) => !this.#recovering.has(p));
  }

  /** Resolves when no partition is being recovered (stop waits for them). */
  async recovered(): Promise<void> {
    await Promise.allSettled([...this.#recovering.values()]);
  }

  /**
   * A script said our epoch is stale. Either another instance owns the partition now (stop
   * acting for it) or Redis lost its data while we still own it (restore the epoch, rebuild).
   */
  onStale(partition: number, epoch: number): Promise<void> {
    // Many scripts of one partition fail at once: check and rebuild only once.
    let recovery = this.#recovering.get(partition);
    if (!recovery) {
      // Ready once it is dispatchable again (out of #recovering), whatever the outcome.
      recovery = this.#recover(partition, epoch).finally(() => {
        this.#recovering.delete(partition);
        this.#hooks.onReady?.(partition);
      });
      this.#recovering.set(partition, recovery);
    }
    return recovery;
  }

  async #recover(partition: number, epoch: number): Promise<void> {
    if (this.#epochs.get(partition) === undefined) return;
    const durable = await partitionOwner(this.#pool, partition);
    if (durable?.owner === this.#owner && Number(durable.epoch) > epoch) {
      // We took the partition again since (a rebalance gave it back): the report is about an
      // epoch we no longer act under. Dropping it here would leave it assigned to us and unowned.
      return;
    }
    if (durable?.owner === this.#owner && Number(durable.epoch) === epoch && (await this.#lost(partition))) {
      this.#log.warn({ partition, epoch }, 'Redis lost the partition state; rebuilding it from PostgreSQL');
      if (await this.#retake(partition, epoch)) return;
    }
    this.#log.warn(
      { partition, epoch, owner: durable?.owner },
      'partition epoch is stale: another instance owns it',
    );
    this.#epochs.delete(partition);
    this.#hooks.onRevoked?.(partition);
  }

  /** Redis lost the partition's state: its epoch, or the mark of its restored attempts. */
  async #lost(partition: number): Promise<boolean> {
    return (await this.#hot.currentEpoch(partition)) === undefined || !(await this.#hot.restored(partition));
  }

  /**
   * Takes a new epoch for a partition we own whose Redis state was lost: tasks dispatched before
   * the loss carry an older epoch, which is how a worker's claim tells them from later ones (see
   * restore-attempts.lua). Dispatches under the old epoch hold its row, so they committed first.
   * False when another instance took the partition meanwhile.
   */
  async #retake(partition: number, held: number): Promise<boolean> {
    const epoch = await retakePartitionEpoch(this.#pool, partition, this.#owner, held);
    if (epoch === undefined) return false;
    if (this.#epochs.get(partition) === undefined) return true; // revoked meanwhile: its next owner takes it
    this.#epochs.set(partition, Promise.resolve(epoch));
    this.#held.set(partition, epoch);
    this.#hooks.onEpoch?.(partition, epoch);
    await this.#install(partition, epoch);
    return true;
  }

  /** Writes the epoch to Redis and rebuilds; under Redis OOM the partition goes PostgreSQL-only. */
  async #install(partition: number, epoch: number): Promise<void> {
    try {
      await this.#hot.setEpoch(partition, epoch);
      await this.#hooks.rebuild(partition, epoch);
    } catch (err) {
      // A stale epoch here is not recovered through onStale (that is us): the caller decides.
      if (!isKairosError(err, 'REDIS_OOM')) throw err;
      this.#hooks.onOom(partition);
    }
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
        this.#hooks.onEpoch?.(partition, epoch);
        await this.#install(partition, epoch);
        this.#held.set(partition, epoch);
        this.#hooks.onReady?.(partition);
        return epoch;
      } catch (err) {
        if (!stillMine()) throw err;
        this.#log.warn({ err, partition }, 'could not take the partition yet; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}
