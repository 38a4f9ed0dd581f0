import { isKairosError } from '@kairos/core';
import type { Logger } from '@kairos/observability';
import type { PartitionModes } from './partition-modes.js';

/** How a guarded action on a partition ended (anything else it threw is the caller's). */
export type Guarded<T> =
  | { readonly outcome: 'done'; readonly value: T }
  /** Our epoch is stale: recovery started (another owner: the partition is dropped; Redis lost it: rebuilt). */
  | { readonly outcome: 'stale' }
  /** Redis refused a write at maxmemory: the partition now runs PostgreSQL-only. */
  | { readonly outcome: 'oom' };

/** Who finds out whether a stale epoch means another owner or a Redis that lost our state. */
export interface StaleRecovery {
  onStale(partition: number, epoch: number): Promise<void>;
}

/**
 * The REDIS_OOM policy: the partition runs PostgreSQL-only until Redis has memory again (the
 * pre-loader probes it). Nothing is dropped: PostgreSQL holds every job. On its own for Ownership,
 * which meets REDIS_OOM while installing an epoch and must not recover its stale epochs through itself.
 */
export function fallBackOnOom(modes: PartitionModes, log: Logger, partition: number): void {
  if (modes.enterFallback(partition)) {
    log.warn({ partition }, 'Redis refused a write (maxmemory): partition runs PostgreSQL-only');
  }
}

export interface OwnershipGuardOptions {
  readonly ownership: StaleRecovery;
  readonly modes: PartitionModes;
  readonly log: Logger;
}

/**
 * Every loop that acts on a partition under its epoch (dispatcher, event applier, pre-loader,
 * reaper) runs through here, so STALE_EPOCH and REDIS_OOM mean the same thing everywhere; the
 * caller only decides what it does next with the outcome.
 */
export class OwnershipGuard {
  readonly #o: OwnershipGuardOptions;

  constructor(options: OwnershipGuardOptions) {
    this.#o = options;
  }

  /**
   * Runs `fn` for the partition at `epoch`. With `awaitRecovery`, a stale epoch's recovery is
   * awaited (the event applier: the events are applied again once it settles); otherwise it runs
   * in the background, so one partition's rebuild holds up no other partition.
   */
  async run<T>(
    partition: number,
    epoch: number,
    fn: () => Promise<T>,
    { awaitRecovery = false }: { awaitRecovery?: boolean } = {},
  ): Promise<Guarded<T>> {
    try {
      return { outcome: 'done', value: await fn() };
    } catch (err) {
      if (isKairosError(err, 'STALE_EPOCH')) {
        if (awaitRecovery) await this.#o.ownership.onStale(partition, epoch);
        else this.stale(partition, epoch);
        return { outcome: 'stale' };
      }
      if (isKairosError(err, 'REDIS_OOM')) {
        fallBackOnOom(this.#o.modes, this.#o.log, partition);
        return { outcome: 'oom' };
      }
      throw err;
    }
  }

  /**
   * The partition's epoch was found superseded outside run() (a claim of several partitions at
   * once): its recovery starts in the background, as run() does.
   */
  stale(partition: number, epoch: number): void {
    this.#o.ownership.onStale(partition, epoch).catch((e: unknown) => this.#recoveryFailed(partition, e));
  }

  #recoveryFailed(partition: number, err: unknown): void {
    this.#o.log.error({ err, partition }, 'recovering a stale partition failed; retrying on next stale');
  }
}
