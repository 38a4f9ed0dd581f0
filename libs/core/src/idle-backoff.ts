/**
 * The pause of a loop that has no deadline to sleep until: `minMs` after a round that did
 * something, doubling with each idle round in a row up to `maxMs`. An idle deployment then pays
 * one round every `maxMs`, while a busy one keeps the short cadence. Pure: no clock, no timer.
 */
export class IdleBackoff {
  readonly #minMs: number;
  readonly #maxMs: number;
  #currentMs: number;

  constructor(minMs: number, maxMs: number = minMs) {
    if (!Number.isFinite(minMs) || minMs < 0)
      throw new RangeError(`minMs must be a non-negative number, got ${minMs}`);
    if (!Number.isFinite(maxMs) || maxMs < minMs)
      throw new RangeError(`maxMs must be a number >= minMs (${minMs}), got ${maxMs}`);
    this.#minMs = minMs;
    this.#maxMs = maxMs;
    this.#currentMs = minMs;
  }

  /** The pause after a round: the shortest one after work, the next longer one after idleness. */
  next(idle: boolean): number {
    if (!idle) {
      this.#currentMs = this.#minMs;
      return this.#minMs;
    }
    const pause = this.#currentMs;
    // From a zero minimum, 1 ms is the first step that doubling can grow.
    this.#currentMs = Math.min(this.#maxMs, Math.max(1, this.#currentMs * 2));
    return pause;
  }

  /** Something happened from outside (a wake): start again from the short pause. */
  reset(): void {
    this.#currentMs = this.#minMs;
  }
}
