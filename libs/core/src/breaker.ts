/**
 * A circuit breaker with slow start (pure; the clock is passed in). Closed, it counts outcomes in
 * a rolling window and opens when dependency failures pass a ratio. Open, it refuses work for
 * `openMs`. Then it ramps: it admits a share of work growing linearly from `initialShare` to all
 * of it over `rampMs`; a dependency failure during the ramp opens it again.
 */
export interface BreakerOptions {
  /** Outcomes kept in the rolling window. Default: 20. */
  readonly window?: number;
  /** Fewest outcomes in the window before the breaker may open. Default: 10. */
  readonly minCalls?: number;
  /** Share of dependency failures in the window that opens it. Default: 0.5. */
  readonly failureRatio?: number;
  /** How long it stays open, ms. Default: 30,000. */
  readonly openMs?: number;
  /** How long slow start ramps back to full traffic, ms. Default: 30,000. */
  readonly rampMs?: number;
  /** Share of work admitted when the ramp begins. Default: 0.1. */
  readonly initialShare?: number;
}

export type BreakerState = 'closed' | 'open' | 'ramping';

export class CircuitBreaker {
  readonly #o: Required<BreakerOptions>;
  #outcomes: boolean[] = [];
  #openedAt: number | undefined;

  constructor(options: BreakerOptions = {}) {
    this.#o = {
      window: options.window ?? 20,
      minCalls: options.minCalls ?? 10,
      failureRatio: options.failureRatio ?? 0.5,
      openMs: options.openMs ?? 30_000,
      rampMs: options.rampMs ?? 30_000,
      initialShare: options.initialShare ?? 0.1,
    };
    if (this.#o.minCalls > this.#o.window) throw new RangeError('minCalls must not exceed window');
    if (!(this.#o.failureRatio > 0 && this.#o.failureRatio <= 1))
      throw new RangeError('failureRatio must be in (0, 1]');
    if (!(this.#o.initialShare > 0 && this.#o.initialShare <= 1))
      throw new RangeError('initialShare must be in (0, 1]');
  }

  state(now: number): BreakerState {
    if (this.#openedAt === undefined) return 'closed';
    const since = now - this.#openedAt;
    if (since < this.#o.openMs) return 'open';
    if (since < this.#o.openMs + this.#o.rampMs) return 'ramping';
    this.#openedAt = undefined; // ramp finished: fully closed again
    this.#outcomes = [];
    return 'closed';
  }

  /** Share of work admitted now: 0 open, ramping up during slow start, 1 closed. */
  share(now: number): number {
    const s = this.state(now);
    if (s === 'closed') return 1;
    if (s === 'open') return 0;
    const progress = (now - (this.#openedAt ?? now) - this.#o.openMs) / this.#o.rampMs;
    return this.#o.initialShare + (1 - this.#o.initialShare) * progress;
  }

  /** Whether to run one unit of work now (`random` in [0, 1)). */
  admit(now: number, random: () => number): boolean {
    const share = this.share(now);
    return share >= 1 || random() < share;
  }

  /** Records an outcome; `dependencyFailed` is true for 503/504-like failures only. */
  record(now: number, dependencyFailed: boolean): void {
    const s = this.state(now);
    if (s === 'ramping' && dependencyFailed) {
      this.#openedAt = now; // still failing: back to open
      return;
    }
    if (s !== 'closed') return;
    this.#outcomes.push(dependencyFailed);
    if (this.#outcomes.length > this.#o.window) this.#outcomes.shift();
    const failures = this.#outcomes.filter(Boolean).length;
    if (
      this.#outcomes.length >= this.#o.minCalls &&
      failures / this.#outcomes.length >= this.#o.failureRatio
    ) {
      this.#openedAt = now;
      this.#outcomes = [];
    }
  }
}

/**
 * A shared retry budget: every first attempt earns `ratio` of a retry (up to `max` saved), every
 * retry spends one. When the budget is empty, failures are not retried at once, so a failing
 * dependency does not get its load multiplied by retries.
 */
export class RetryBudget {
  #tokens: number;
  readonly #ratio: number;
  readonly #max: number;

  constructor(options: { ratio?: number; max?: number; initial?: number } = {}) {
    this.#ratio = options.ratio ?? 0.2;
    this.#max = options.max ?? 100;
    this.#tokens = Math.min(this.#max, options.initial ?? 10);
    if (!(this.#ratio >= 0 && this.#ratio <= 1)) throw new RangeError('ratio must be in [0, 1]');
  }

  /** A first attempt ran. */
  earn(): void {
    this.#tokens = Math.min(this.#max, this.#tokens + this.#ratio);
  }

  /** Adds tokens (up to the maximum): a time-based trickle keeps retries moving when no first attempts come. */
  credit(tokens: number): void {
    if (tokens > 0) this.#tokens = Math.min(this.#max, this.#tokens + tokens);
  }

  /** Takes one retry from the budget; false when it is spent. */
  trySpend(): boolean {
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  get available(): number {
    return this.#tokens;
  }
}
