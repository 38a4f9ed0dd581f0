import { CircuitBreaker, RetryBudget, type BreakerOptions, type BreakerState } from '@kairos/core';

export interface AdmissionOptions {
  /** Per job type; false turns breakers off. Default: the core defaults (open at 50 % of ≥ 10). */
  readonly breaker: BreakerOptions | false;
  /** Shared by every job type; false turns it off. Default: ratio 0.2, at most 100 saved. */
  readonly retryBudget: { ratio?: number; max?: number; minPerSecond?: number } | false;
  readonly onBreakerChange?: (jobType: string, from: BreakerState, to: BreakerState) => void;
}

/**
 * Decides whether a task may run now. Per job type, a circuit breaker opens when its dependency
 * keeps failing (handlers throwing transient or throttled errors: 503/504-like) and admits only
 * a growing share of that type's tasks while it slowly starts again. Retries (attempt > 1) also
 * draw from a retry budget that first attempts fill, so a failing dependency is not hit by every
 * retry at once. A task refused now waits in the worker and asks again a little later; it is not
 * run, so it uses no attempt.
 */
export class Admission {
  readonly #o: AdmissionOptions;
  readonly #breakers = new Map<string, CircuitBreaker>();
  readonly #states = new Map<string, BreakerState>();
  readonly #budget: RetryBudget | undefined;
  readonly #trickle: number;
  #creditedAt = Date.now();

  constructor(options: AdmissionOptions) {
    this.#o = options;
    this.#budget = options.retryBudget === false ? undefined : new RetryBudget(options.retryBudget);
    this.#trickle = options.retryBudget === false ? 0 : (options.retryBudget.minPerSecond ?? 1);
    // Fail fast on bad breaker options rather than on the first task.
    if (options.breaker !== false) new CircuitBreaker(options.breaker);
  }

  #breaker(jobType: string): CircuitBreaker | undefined {
    if (this.#o.breaker === false) return undefined;
    let b = this.#breakers.get(jobType);
    if (!b) {
      b = new CircuitBreaker(this.#o.breaker);
      this.#breakers.set(jobType, b);
    }
    return b;
  }

  /** Breaker state of a job type ('closed' when it has none yet). */
  state(jobType: string, now = Date.now()): BreakerState {
    return this.#breakers.get(jobType)?.state(now) ?? 'closed';
  }

  admit(jobType: string, attempt: number, now = Date.now(), random: () => number = Math.random): boolean {
    const b = this.#breaker(jobType);
    this.#track(jobType, now);
    if (b && !b.admit(now, random)) return false;
    if (!this.#budget) return true;
    // Retries keep moving at a floor rate even when no first attempts fill the budget.
    this.#budget.credit(((now - this.#creditedAt) / 1000) * this.#trickle);
    this.#creditedAt = now;
    if (attempt <= 1) {
      this.#budget.earn();
      return true;
    }
    return this.#budget.trySpend();
  }

  /** Records how an admitted task ended: `dependencyFailed` for transient and throttled failures. */
  record(jobType: string, dependencyFailed: boolean, now = Date.now()): void {
    this.#breaker(jobType)?.record(now, dependencyFailed);
    this.#track(jobType, now);
  }

  #track(jobType: string, now: number): void {
    const to = this.state(jobType, now);
    const from = this.#states.get(jobType) ?? 'closed';
    if (to !== from) {
      this.#states.set(jobType, to);
      this.#o.onBreakerChange?.(jobType, from, to);
    }
  }
}
