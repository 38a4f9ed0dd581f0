import type { PopResult } from '@kairos/redis';
import type { ReleasePlan } from './release.js';

/**
 * When a partition next has something to pop, on Redis time (ms), from what its last pop left:
 * each class's earliest waiting job minus the pre-dispatch lead, but not before its rate limit
 * has a token again when the limit held it back, and the in-flight reclaim time. Infinity when
 * nothing waits. (A class popped to its limit is the caller's "busy": it goes again at once.)
 */
export function nextDeadline(pop: PopResult, plan: ReleasePlan, leadMs: number): number {
  let next = pop.reclaimAtMs ?? Infinity;
  plan.classes.forEach((c, i) => {
    const due = pop.nextDueMs[i];
    if (due === undefined) return;
    let at = due - leadMs;
    // No token was left for it: nothing of it can go before the bucket refills.
    if (c.limit === 0) at = Math.max(at, pop.nowMs + (plan.refillMs.get(c.name) ?? 0));
    next = Math.min(next, at);
  });
  return next;
}

/**
 * The dispatcher's per-partition wake-up times, on a local monotonic clock. Deadlines come from
 * Redis time (the last pop's TIME and its reply's arrival give the offset; taking the arrival
 * makes a converted deadline late by at most the reply's transit, never early), from events (a
 * job scheduled due earlier than planned) and from state changes (refresh). A partition is
 * visited when its deadline comes, and at least every `maxSleepMs` (safety net).
 */
export class PartitionDeadlines {
  readonly #maxSleepMs: number;
  readonly #now: () => number;
  /** From the partition's last visit. */
  readonly #planned = new Map<number, number>();
  /** Earlier wakes asked for since the partition's last visit started (its pop may miss them). */
  readonly #hinted = new Map<number, number>();
  #clock: { readonly redisMs: number; readonly localMs: number } | undefined;

  constructor(maxSleepMs: number, now: () => number = () => performance.now()) {
    this.#maxSleepMs = maxSleepMs;
    this.#now = now;
  }

  now(): number {
    return this.#now();
  }

  /** A Redis TIME reading that just arrived. */
  sync(redisMs: number): void {
    this.#clock = { redisMs, localMs: this.#now() };
  }

  /** A Redis time as a local one; now when no reading came yet (waking early only costs a pop). */
  toLocal(redisMs: number): number {
    if (!this.#clock) return this.#now();
    return this.#clock.localMs + (redisMs - this.#clock.redisMs);
  }

  /**
   * A visit of the partition begins: its pop reflects every hint so far. Until plan() ends the
   * visit, every hint is kept (the pop may have run before the job arrived), whatever it is.
   */
  visiting(partition: number): void {
    this.#planned.set(partition, Infinity);
    this.#hinted.delete(partition);
  }

  /** After a visit: next visit at `localMs`, at the latest maxSleepMs from now. */
  plan(partition: number, localMs: number): void {
    this.#planned.set(partition, Math.min(localMs, this.#now() + this.#maxSleepMs));
  }

  /** Something may be due at `localMs`; true when that is earlier than the partition's deadline. */
  hint(partition: number, localMs: number): boolean {
    if (localMs >= this.#deadline(partition)) return false;
    this.#hinted.set(partition, Math.min(localMs, this.#hinted.get(partition) ?? Infinity));
    return true;
  }

  /**
   * Visit the partition at the next round (its state changed: rebuilt, new owner, mode, a rate
   * limit lifted). Kept as a hint, so a refresh during a visit outlives that visit's plan(): the
   * visit's pop may have run before the change (a limit cleared while the round was popping).
   */
  refresh(partition: number): void {
    this.#planned.delete(partition);
    this.#hinted.set(partition, -Infinity);
  }

  forget(partition: number): void {
    this.#planned.delete(partition);
    this.#hinted.delete(partition);
  }

  /** The partitions whose deadline has come (or comes within slackMs), or that have none yet. */
  due(partitions: readonly number[], slackMs: number): number[] {
    const until = this.#now() + slackMs;
    return partitions.filter((p) => this.#deadline(p) <= until);
  }

  /** How long the dispatcher may sleep before one of these partitions' deadlines, ms. */
  pauseMs(partitions: readonly number[]): number {
    const next = Math.min(this.#now() + this.#maxSleepMs, ...partitions.map((p) => this.#deadline(p)));
    // Whole ms rounded up: a timer may fire a little early on the loop's clock.
    return Math.max(0, Math.ceil(next - this.#now()));
  }

  #deadline(partition: number): number {
    const planned = this.#planned.get(partition);
    if (planned === undefined) return -Infinity;
    return Math.min(planned, this.#hinted.get(partition) ?? Infinity);
  }
}
