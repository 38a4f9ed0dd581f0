import { LifecycleService, serviceGroup, type Lifecycle } from '@kairos/core';
import { createDelayTierMetrics, silentLogger, type DelayTierMetrics } from '@kairos/observability';
import type { HotSet, Leases, RateLimiter } from '@kairos/redis';
import type { TierAdmin } from './admin.js';
import { composeTier, type Tier } from './compose-tier.js';
import { checkOptions, type DelayTierOptions } from './delay-tier-options.js';
import { tierAdmin } from './tier-admin.js';

export type { DelayTierOptions } from './delay-tier-options.js';

/**
 * The delay tier: one member of the consumer group on kairos.job-events. Each owned partition's
 * events feed its Redis hot set (jobs within the lookahead window; a pre-loader brings later ones
 * in as they approach); a dispatcher releases due jobs on Redis time to `kairos.tasks.<class>`.
 * Under Redis memory pressure a partition runs from PostgreSQL alone until Redis recovers.
 * composeTier builds its parts; it starts them in dependency order and stops them in reverse.
 */
export class DelayTier extends LifecycleService {
  readonly metrics: DelayTierMetrics;
  readonly #tier: Tier;
  readonly #life: Lifecycle;

  constructor(options: DelayTierOptions) {
    super('delay tier');
    checkOptions(options);
    this.metrics = options.metrics ?? createDelayTierMetrics();
    this.#tier = composeTier(options, options.log ?? silentLogger(), this.metrics);
    this.#life = serviceGroup('delay tier', this.#tier.services);
  }

  protected onStart(): Promise<void> {
    return this.#life.start();
  }

  protected onStop(): Promise<void> {
    return this.#life.stop();
  }

  /** Leases of running attempts in this tier's Redis. */
  get leases(): Leases {
    return this.#tier.leases;
  }

  get hotSet(): HotSet {
    return this.#tier.hot;
  }

  get rateLimiter(): RateLimiter {
    return this.#tier.limiter;
  }

  ownedPartitions(): number[] {
    return this.#tier.ownership.owned();
  }

  /** Partitions running PostgreSQL-only (Redis out of memory). */
  fallbackPartitions(): number[] {
    return this.#tier.modes.fallbackPartitions();
  }

  /** The operations surface: window, rate limits, per-partition status. */
  admin(): TierAdmin {
    const t = this.#tier;
    return tierAdmin({
      lookahead: t.lookahead,
      limiter: t.limiter,
      release: t.release,
      ownership: t.ownership,
      modes: t.modes,
      hot: t.hot,
      onWindowChange: () => {
        this.metrics.lookahead.set(t.lookahead.effectiveMs / 1000);
        t.preloader.nudge();
      },
      onLimitsChange: () => t.dispatcher.refresh(),
    });
  }
}
