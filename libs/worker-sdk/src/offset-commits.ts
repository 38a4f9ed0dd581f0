import type { Assignment, PartitionOffset } from '@kairos/kafka';
import { PartitionWatermark } from './commit-watermark.js';

export interface OffsetCommitsOptions {
  /** Commits positions to the group; rejects if it refused them. */
  readonly commit: (offsets: readonly PartitionOffset[]) => Promise<void>;
  /** Least time between two commits, ms: finishes within it share one commit. */
  readonly intervalMs: number;
  readonly onError: (err: unknown) => void;
}

/**
 * The watermarks of the partitions this worker owns, and their commits: when a watermark moves,
 * every partition's is committed together, at most once per interval (a burst of finishes is one
 * commit), and at once on flush() (a rebalance starting, a stop). Only owned partitions are
 * committed: a revoked partition's watermark is dropped with it.
 */
export class OffsetCommits {
  readonly #o: OffsetCommitsOptions;
  #assignment: Assignment = new Map();
  readonly #owned = new Map<string, PartitionWatermark>();
  #timer: NodeJS.Timeout | undefined;
  #lastCommitAt = 0;
  #closed = false;
  /** Commits one after another, so positions reach the group in order. */
  #tail: Promise<void> = Promise.resolve();

  constructor(options: OffsetCommitsOptions) {
    this.#o = options;
  }

  /** The watermark of an owned partition (created on its first message); undefined if not owned. */
  watermark(topic: string, partition: number): PartitionWatermark | undefined {
    const key = `${topic}/${partition}`;
    let w = this.#owned.get(key);
    if (!w && this.#assignment.get(topic)?.has(partition)) {
      w = new PartitionWatermark(topic, partition);
      this.#owned.set(key, w);
    }
    return w;
  }

  /** The group's new assignment; returns the watermarks of the partitions it took away. */
  assign(assignment: Assignment): PartitionWatermark[] {
    this.#assignment = assignment;
    const revoked: PartitionWatermark[] = [];
    for (const [key, w] of this.#owned) {
      if (assignment.get(w.topic)?.has(w.partition)) continue;
      w.revoke();
      this.#owned.delete(key);
      revoked.push(w);
    }
    return revoked;
  }

  /** A task of `w` at `offset` finished: its partition may be committed further. */
  finished(w: PartitionWatermark, offset: string): void {
    if (w.finish(offset) && !w.revoked) this.#schedule();
  }

  /** Commits every owned partition's watermark now (after any commit under way). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.#tail.then(() => this.#commitDue());
    this.#tail = next.catch(() => undefined);
    return next;
  }

  /** Stops the timer (the worker left: nothing more is committed). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer || this.#closed) return;
    const wait = Math.max(0, this.#lastCommitAt + this.#o.intervalMs - Date.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch(this.#o.onError);
    }, wait);
  }

  async #commitDue(): Promise<void> {
    const due: { w: PartitionWatermark; offset: string }[] = [];
    for (const w of this.#owned.values()) {
      const offset = w.due();
      if (offset !== undefined) due.push({ w, offset });
    }
    if (due.length === 0) return;
    this.#lastCommitAt = Date.now();
    try {
      await this.#o.commit(due.map(({ w, offset }) => ({ topic: w.topic, partition: w.partition, offset })));
    } catch (err) {
      // Refused (a rebalance under way, the coordinator moving): tried again after the interval;
      // what a new owner gets again meanwhile, its claim finds finished.
      this.#schedule();
      throw err;
    }
    for (const { w, offset } of due) w.committed(offset);
  }
}
