import { IdleBackoff, LifecycleService, PollLoop } from '@kairos/core';
import type { Logger } from '@kairos/observability';
import { memoryUse, type HotSet, type RedisClient } from '@kairos/redis';
import type { Hydrator } from './hydrator.js';
import type { Lookahead } from './lookahead.js';
import type { Ownership } from './ownership.js';
import type { OwnershipGuard } from './ownership-guard.js';
import type { PartitionModes } from './partition-modes.js';

const PROBE_SLACK_MS = 20;

export interface PreloaderOptions {
  readonly redis: RedisClient;
  readonly hot: HotSet;
  readonly hydrator: Hydrator;
  readonly ownership: Ownership;
  readonly modes: PartitionModes;
  /** STALE_EPOCH and REDIS_OOM policy. */
  readonly guard: OwnershipGuard;
  readonly lookahead: Lookahead;
  readonly log: Logger;
  /** Pause after a round that loaded, trimmed or recovered something, ms. */
  readonly intervalMs: number;
  /**
   * Idle rounds in a row double the pause up to this, ms, and never past a quarter of what the
   * window leaves after the pre-dispatch lead, so a job still enters the hot set long before due.
   */
  readonly maxIntervalMs: number;
  /** Pre-dispatch lead, ms: jobs must be in the hot set this long before due. */
  readonly leadMs: number;
  /** How often a partition in PostgreSQL-only mode checks whether Redis has memory again. */
  readonly probeMs: number;
  /** Redis must be below this share of maxmemory before a partition leaves PostgreSQL-only mode. */
  readonly recoverBelow: number;
  readonly onHydrated?: (partition: number, jobs: number) => void;
  readonly onRecovered?: (partition: number) => void;
  /** Called once per round with each owned partition (metrics). */
  readonly onRound?: (partitions: readonly number[]) => Promise<void>;
}

/**
 * The pre-loader loop: every interval, each owned partition's hot set is topped up to the
 * lookahead horizon (trimmed first if the window shrank), and each partition in PostgreSQL-only
 * mode checks whether Redis has memory again, and if so is rebuilt and returns to hot mode.
 *
 * Idle, it backs off: events bring every job due within the window themselves, so all a round
 * has to do is move the horizon, and a job W ms away needs loading only before W - lead. The
 * pause grows from intervalMs to maxIntervalMs (capped by the window, and by the probe interval
 * while a partition runs PostgreSQL-only); a window change (nudge) runs a round at once.
 */
export class Preloader extends LifecycleService {
  readonly #o: PreloaderOptions;
  #lastProbe = 0;
  readonly #loop: PollLoop;
  readonly #backoff: IdleBackoff;
  /** Something was loaded, trimmed or recovered in the current round. */
  #worked = false;

  constructor(options: PreloaderOptions) {
    super('pre-loader');
    this.#o = options;
    this.#backoff = new IdleBackoff(options.intervalMs, options.maxIntervalMs);
    this.#loop = new PollLoop({
      round: async () => {
        this.#worked = false;
        await this.#round();
        return this.#pauseMs();
      },
      intervalMs: options.intervalMs,
      onError: (err) => options.log.error({ err }, 'pre-loading round failed'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Run a round now (the window changed, a partition's mode changed). */
  nudge(): void {
    this.#backoff.reset();
    this.#loop.wake();
  }

  /** The pause after a round: back-off, within the window's and the probe's bounds. */
  #pauseMs(): number {
    const windowCap = Math.max(10, (this.#o.lookahead.effectiveMs - this.#o.leadMs) / 4);
    const probeCap = this.#o.modes.fallbackPartitions().length > 0 ? this.#o.probeMs : Infinity;
    return Math.min(this.#backoff.next(!this.#worked), windowCap, probeCap);
  }

  async #round(): Promise<void> {
    const owned = this.#o.ownership.owned();
    // A little slack: a round timed to the probe interval may start a ms before it by Date.now.
    const probe = Date.now() - this.#lastProbe >= this.#o.probeMs - PROBE_SLACK_MS;
    if (probe) this.#lastProbe = Date.now();
    for (const partition of owned) {
      if (!this.#loop.running) return;
      try {
        await this.#visit(partition, probe);
      } catch (err) {
        this.#o.log.error({ err, partition }, 'pre-loading failed; retrying next round');
      }
    }
    await this.#o.onRound?.(owned).catch((err: unknown) => this.#o.log.warn({ err }, 'metrics round failed'));
  }

  /** Tops the partition up, or in PostgreSQL-only mode (when probing) tries to bring it back. */
  async #visit(partition: number, probe: boolean): Promise<void> {
    const fallback = this.#o.modes.isFallback(partition);
    if (fallback && !probe) return;
    const epochP = this.#o.ownership.epoch(partition);
    if (!epochP) return;
    const epoch = await epochP;
    // The outcome needs no follow-up: a stale partition recovers (or leaves) by itself, an OOM
    // one is in PostgreSQL-only mode, and the next round looks at each again.
    await this.#o.guard.run(partition, epoch, () =>
      fallback ? this.#tryRecover(partition, epoch) : this.#topUp(partition, epoch),
    );
  }

  async #topUp(partition: number, epoch: number): Promise<void> {
    const windowMs = this.#o.lookahead.effectiveMs;
    const before = this.#o.hydrator.windowOf(partition);
    if (before !== undefined && windowMs < before) {
      const dropped = await this.#o.hot.trim(partition, epoch, windowMs);
      this.#worked = true;
      this.#o.hydrator.rewindTo(partition, (await this.#o.hot.serverTimeMs()) + windowMs);
      this.#o.log.info({ partition, windowMs, dropped }, 'lookahead window shrank; hot set trimmed');
    }
    const added = await this.#o.hydrator.run(partition, epoch, windowMs);
    if (added > 0) {
      this.#worked = true;
      this.#o.onHydrated?.(partition, added);
    }
  }

  /** Redis below the threshold of maxmemory: rebuild the partition's hot set and leave fallback. */
  async #tryRecover(partition: number, epoch: number): Promise<void> {
    if ((await memoryUse(this.#o.redis)) >= this.#o.recoverBelow) return;
    await this.#o.hot.setEpoch(partition, epoch);
    // Entries left from before may be stale (cancelled or dispatched from PostgreSQL meanwhile).
    await this.#o.hot.clear(partition, epoch);
    this.#o.hydrator.reset(partition);
    // Back to hot mode before hydrating: an event skipped until now belongs to a row committed
    // before this point, which the hydration query sees; later events are applied again.
    this.#o.modes.leaveFallback(partition);
    const windowMs = this.#o.lookahead.effectiveMs;
    const added = await this.#o.hydrator.run(partition, epoch, windowMs);
    this.#worked = true;
    this.#o.onHydrated?.(partition, added);
    this.#o.onRecovered?.(partition);
    this.#o.log.info({ partition, added }, 'Redis has memory again: partition back on its hot set');
  }
}
