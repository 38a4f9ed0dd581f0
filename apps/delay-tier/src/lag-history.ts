import { LagAccumulator, LifecycleService } from '@kairos/core';
import { addLagMinutes, pruneLagMinutes, type Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';

export interface LagHistoryOptions {
  readonly pool: Pool;
  /** This instance's rows in dispatch_lag_minutes. */
  readonly instanceId: string;
  readonly log: Logger;
  /** Longest a sample waits in memory before it is written, ms (and the shortest gap between writes). Default: 10,000. */
  readonly flushMs?: number;
  /** Minutes older than this are deleted, ms. Default: 24 h. */
  readonly keepMs?: number;
  /** Class-minutes kept while PostgreSQL refuses them (older ones are dropped). Default: 10,000. */
  readonly maxPending?: number;
}

/** The oldest minutes are pruned at most this often, ms (on a flush: an idle tier does nothing). */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Dispatch lag per minute and class in PostgreSQL (dispatch_lag_minutes), for the console's chart
 * when Prometheus is not there. Dispatches are counted in memory (no round trip on the hot path);
 * the first sample after a write arms one timer for flushMs after that write, which writes every
 * pending class-minute in one statement. Idle, it does nothing. A chart, not a record: a crash
 * loses at most the last flushMs of samples; a failed write is logged and its samples are kept
 * for the next one (bounded by maxPending).
 */
export class LagHistory extends LifecycleService {
  readonly #o: LagHistoryOptions;
  readonly #flushMs: number;
  readonly #keepMs: number;
  readonly #pending: LagAccumulator;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #lastFlushAt = 0;
  #lastPruneAt = 0;
  #open = false;

  constructor(options: LagHistoryOptions) {
    super('dispatch lag history');
    this.#o = options;
    this.#flushMs = options.flushMs ?? 10_000;
    this.#keepMs = options.keepMs ?? 86_400_000;
    if (!Number.isInteger(this.#flushMs) || this.#flushMs < 10)
      throw new RangeError(`flushMs must be an integer >= 10, got ${this.#flushMs}`);
    this.#pending = new LagAccumulator(options.maxPending ?? 10_000);
  }

  /** A job of `resourceClass` dispatched at `atMs`, `lagMs` after it was due. */
  observe(resourceClass: string, atMs: number, lagMs: number): void {
    this.#pending.observe(resourceClass, atMs, lagMs);
    this.#arm();
  }

  protected onStart(): void {
    this.#open = true;
  }

  protected async onStop(): Promise<void> {
    this.#open = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    await this.flush();
  }

  /** Writes what is pending now (the timer does this; stop does it last). */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
      this.#arm();
    });
    return this.#flushing;
  }

  #arm(): void {
    if (!this.#open || this.#timer || this.#flushing || this.#pending.size === 0) return;
    const wait = Math.max(0, this.#lastFlushAt + this.#flushMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, wait);
  }

  async #write(): Promise<void> {
    const rows = this.#pending.drain();
    if (rows.length === 0) return;
    this.#lastFlushAt = Date.now();
    try {
      await addLagMinutes(this.#o.pool, this.#o.instanceId, rows);
    } catch (err) {
      this.#pending.restore(rows);
      this.#o.log.warn(
        { err, pending: this.#pending.size, dropped: this.#pending.dropped },
        'could not write the dispatch lag history; keeping it for the next write',
      );
      return;
    }
    if (this.#lastFlushAt - this.#lastPruneAt < PRUNE_EVERY_MS) return;
    this.#lastPruneAt = this.#lastFlushAt;
    try {
      await pruneLagMinutes(this.#o.pool, new Date(this.#lastFlushAt - this.#keepMs));
    } catch (err) {
      this.#o.log.warn({ err }, 'could not prune the dispatch lag history; trying again in an hour');
    }
  }
}
