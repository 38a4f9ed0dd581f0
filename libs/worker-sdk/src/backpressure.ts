import type { BufferBudget } from './buffer-budgets.js';
import type { WorkerLogger } from './options.js';

export interface BackpressureOptions {
  /** Classes counted together, each group with its own limit (bufferBudgets). */
  readonly budgets: readonly BufferBudget[];
  /** Tasks of a class held for their due time: taken, but not counted. */
  readonly early: (resourceClass: string) => number;
  /** Stops (or starts again) fetching the task topics of these classes. */
  readonly pause: (classes: readonly string[]) => void;
  readonly resume: (classes: readonly string[]) => void;
  readonly logger: WorkerLogger;
}

/**
 * Counts the tasks taken from Kafka and not finished, per class, and pauses a budget's classes
 * once they reach its limit; resumes them once a quarter of those are through, so the pool still
 * has work for the fetch wait of a consumer that was paused.
 */
export class Backpressure {
  readonly #o: BackpressureOptions;
  readonly #taken = new Map<string, number>();
  readonly #paused = new Set<BufferBudget>();

  constructor(options: BackpressureOptions) {
    this.#o = options;
  }

  /** A task of this class was taken (+1) or is through here (-1). */
  taken(resourceClass: string, by: 1 | -1): void {
    this.#taken.set(resourceClass, (this.#taken.get(resourceClass) ?? 0) + by);
  }

  /** Pauses or resumes each budget's classes as their count asks. */
  check(): void {
    for (const budget of this.#o.budgets) {
      const buffered = budget.classes.reduce(
        (n, rc) => n + (this.#taken.get(rc) ?? 0) - this.#o.early(rc),
        0,
      );
      const classes = budget.classes;
      if (!this.#paused.has(budget) && buffered >= budget.max) {
        this.#paused.add(budget);
        this.#o.pause(classes);
        this.#o.logger.info({ buffered, classes }, 'task consumption paused: the handler pool is behind');
      } else if (this.#paused.has(budget) && buffered <= (budget.max * 3) / 4) {
        this.#paused.delete(budget);
        this.#o.resume(classes);
        this.#o.logger.info({ buffered, classes }, 'task consumption resumed');
      }
    }
  }
}
