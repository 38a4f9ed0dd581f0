/**
 * The lookahead window: jobs due within it live in the Redis hot set, later ones only in
 * PostgreSQL. Operators set it at run time; under Redis memory pressure it shrinks to a floor on
 * its own and comes back when memory does.
 */
export class Lookahead {
  #configuredMs: number;
  #shrunk = false;
  readonly #floorMs: number;

  constructor(configuredMs: number, floorMs: number) {
    this.#configuredMs = configuredMs;
    this.#floorMs = Math.min(floorMs, configuredMs);
  }

  get configuredMs(): number {
    return this.#configuredMs;
  }

  /** The window in force now. */
  get effectiveMs(): number {
    return this.#shrunk ? Math.min(this.#floorMs, this.#configuredMs) : this.#configuredMs;
  }

  set(ms: number): void {
    this.#configuredMs = ms;
  }

  /** Memory pressure: hold only what is due soon. */
  shrink(): void {
    this.#shrunk = true;
  }

  restore(): void {
    this.#shrunk = false;
  }
}
