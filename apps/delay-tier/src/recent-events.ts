/**
 * Outbox event ids (the `id` header) this instance applied lately, oldest forgotten first. Each
 * job event reaches kairos.job-events twice, from the outbox relay and from Debezium; the second
 * copy is skipped here before it is decoded or sent to Redis. A miss (forgotten, another
 * instance, a restart) costs only the work: the hot set's version check ignores it anyway.
 */
export class RecentEvents {
  readonly #ids = new Set<string>();
  readonly #max: number;

  constructor(max = 50_000) {
    this.#max = max;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > this.#max) {
      const oldest = this.#ids.values().next();
      if (!oldest.done) this.#ids.delete(oldest.value);
    }
  }
}
