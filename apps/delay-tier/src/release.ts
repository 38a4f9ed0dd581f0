import type { RateLimit, RateLimiter } from '@kairos/redis';

export interface ReleasePlan {
  /** Classes in release order with the most jobs each may pop this round. */
  readonly classes: readonly { readonly name: string; readonly limit: number }[];
  /** Tokens taken from rate-limited classes (refund what was not used). */
  readonly granted: ReadonlyMap<string, number>;
  /** Rate-limited classes: ms until their bucket holds a whole token again (0: it does now). */
  readonly refillMs: ReadonlyMap<string, number>;
}

/** The release order: `critical` first, so it never waits behind another class's backlog. */
export function releaseOrder(classes: readonly string[]): string[] {
  return [...classes].sort((a, b) => Number(b === 'critical') - Number(a === 'critical'));
}

/**
 * Per-round release limits: every class may pop a batch; a class with a rate limit (a token
 * bucket in Redis, shared by every delay-tier instance and changeable at run time) only as many
 * as it got tokens. Limits are re-read at most every `refreshMs`, so a round costs no extra
 * Redis call unless some class is limited.
 */
export class Release {
  readonly #limiter: RateLimiter;
  readonly #order: readonly string[];
  readonly #batchSize: number;
  readonly #refreshMs: number;
  #limits: Record<string, RateLimit> = {};
  #readAt = -Infinity;

  constructor(limiter: RateLimiter, classes: readonly string[], batchSize: number, refreshMs = 1000) {
    this.#limiter = limiter;
    this.#order = releaseOrder(classes);
    this.#batchSize = batchSize;
    this.#refreshMs = refreshMs;
  }

  /** Forget the cached limits (an admin change through this instance applies at once). */
  invalidate(): void {
    this.#readAt = -Infinity;
  }

  /**
   * Whether some class (of `only`, default all) had a rate limit when limits were last read (true
   * before the first read): only then must partitions pop one at a time, so that the first to ask
   * does not take a small bucket whole.
   */
  limited(only?: ReadonlySet<string>): boolean {
    return (
      this.#readAt === -Infinity ||
      this.#order.some((c) => (only === undefined || only.has(c)) && this.#limits[c] !== undefined)
    );
  }

  /** The classes known, in release order. */
  get classes(): readonly string[] {
    return this.#order;
  }

  /** This round's plan for `only` those classes (default: all), taking tokens of limited ones. */
  async plan(only?: ReadonlySet<string>): Promise<ReleasePlan> {
    if (Date.now() - this.#readAt >= this.#refreshMs) {
      this.#limits = await this.#limiter.limits();
      this.#readAt = Date.now();
    }
    const order = only === undefined ? this.#order : this.#order.filter((c) => only.has(c));
    const limited = order.filter((c) => this.#limits[c] !== undefined);
    const { granted, refillMs } =
      limited.length === 0
        ? { granted: new Map<string, number>(), refillMs: new Map<string, number>() }
        : await this.#limiter.takeTokens(new Map(limited.map((c) => [c, this.#batchSize])));
    return {
      classes: order.map((name) => ({ name, limit: granted.get(name) ?? this.#batchSize })),
      granted,
      refillMs,
    };
  }

  /** Gives back tokens taken but not used (fewer jobs were due than granted). */
  async settle(plan: ReleasePlan, poppedPerClass: ReadonlyMap<string, number>): Promise<void> {
    const unused = new Map<string, number>();
    for (const [c, n] of plan.granted) {
      const left = n - (poppedPerClass.get(c) ?? 0);
      if (left > 0) unused.set(c, left);
    }
    if (unused.size > 0) await this.#limiter.refund(unused);
  }
}
