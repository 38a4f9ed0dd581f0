/**
 * Which owned partitions run PostgreSQL-only (Redis refused a write at maxmemory) rather than from
 * their hot set. A partition enters on its own OOM and leaves once it was rebuilt in Redis.
 */
export class PartitionModes {
  readonly #fallback = new Set<number>();
  readonly #onChange: (partition: number, fallback: boolean) => void;

  constructor(onChange: (partition: number, fallback: boolean) => void = () => undefined) {
    this.#onChange = onChange;
  }

  isFallback(partition: number): boolean {
    return this.#fallback.has(partition);
  }

  fallbackPartitions(): number[] {
    return [...this.#fallback].sort((a, b) => a - b);
  }

  /** Returns true if the partition was not in fallback before. */
  enterFallback(partition: number): boolean {
    if (this.#fallback.has(partition)) return false;
    this.#fallback.add(partition);
    this.#onChange(partition, true);
    return true;
  }

  leaveFallback(partition: number): void {
    if (this.#fallback.delete(partition)) this.#onChange(partition, false);
  }

  /**
   * A revoked partition is forgotten with its mode; if it was in fallback, listeners hear it left
   * (otherwise the lookahead window stays shrunk with no partition in fallback).
   */
  forget(partition: number): void {
    if (this.#fallback.delete(partition)) this.#onChange(partition, false);
  }
}
