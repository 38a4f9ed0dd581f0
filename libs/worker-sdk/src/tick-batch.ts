interface Pending<I, O> {
  readonly item: I;
  readonly resolve: (outcome: O) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Turns single calls into batches: calls made in the same tick, or while the previous batch is
 * under way, go out as one batch (one round trip) of at most `maxItems`, and each caller gets its
 * own outcome. `run` returns one settled outcome per item, in order; if it throws, every item of
 * the batch fails.
 */
export class TickBatch<I, O> {
  readonly #run: (items: I[]) => Promise<readonly PromiseSettledResult<O>[]>;
  readonly #maxItems: number;
  readonly #queue: Pending<I, O>[] = [];
  #flushing = false;

  constructor(run: (items: I[]) => Promise<readonly PromiseSettledResult<O>[]>, maxItems = 500) {
    this.#run = run;
    this.#maxItems = maxItems;
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        void this.#flush();
      }
    });
  }

  async #flush(): Promise<void> {
    // Let the calls of this tick (tasks starting or finishing together) join the batch.
    await new Promise((r) => setImmediate(r));
    while (this.#queue.length > 0) {
      // Bounded, so one request stays well under Kafka's and Redis's size limits.
      const batch = this.#queue.splice(0, this.#maxItems);
      try {
        const outcomes = await this.#run(batch.map((p) => p.item));
        batch.forEach((p, i) => {
          const o = outcomes[i];
          if (o?.status === 'fulfilled') p.resolve(o.value);
          else p.reject(o ? o.reason : new Error('no outcome for a batched call'));
        });
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.#flushing = false;
  }
}
