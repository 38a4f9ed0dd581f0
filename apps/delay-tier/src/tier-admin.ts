import type { HotSet, RateLimiter } from '@kairos/redis';
import type { PartitionStatus, TierAdmin } from './admin.js';
import type { Lookahead } from './lookahead.js';
import type { Ownership } from './ownership.js';
import type { PartitionModes } from './partition-modes.js';
import type { Release } from './release.js';

export interface TierAdminDeps {
  readonly lookahead: Lookahead;
  readonly limiter: RateLimiter;
  readonly release: Release;
  readonly ownership: Ownership;
  readonly modes: PartitionModes;
  readonly hot: HotSet;
  readonly onWindowChange: () => void;
  /** A rate limit was set or cleared here (a held-back class may go now). */
  readonly onLimitsChange: () => void;
}

/** The delay tier's operations surface, served by the admin HTTP server. */
export function tierAdmin(d: TierAdminDeps): TierAdmin {
  return {
    lookahead: () => ({ configuredMs: d.lookahead.configuredMs, effectiveMs: d.lookahead.effectiveMs }),
    setLookahead: (ms) => {
      d.lookahead.set(ms);
      d.onWindowChange();
    },
    rateLimits: () => d.limiter.limits(),
    setRateLimit: async (resourceClass, limit) => {
      await d.limiter.setLimit(resourceClass, limit);
      d.release.invalidate();
      d.onLimitsChange();
    },
    clearRateLimit: async (resourceClass) => {
      await d.limiter.clearLimit(resourceClass);
      d.release.invalidate();
      d.onLimitsChange();
    },
    status: async () => {
      const now = await d.hot.serverTimeMs();
      const partitions: PartitionStatus[] = [];
      for (const partition of d.ownership.owned()) {
        const epoch = d.ownership.heldEpoch(partition);
        const s = await d.hot.stats(partition);
        partitions.push({
          partition,
          epoch: epoch ?? null,
          mode: d.modes.isFallback(partition) ? 'fallback' : 'hot',
          hotJobs: s.jobs,
          oldestDueAgeMs: s.oldestDueMs === undefined ? null : Math.max(0, now - s.oldestDueMs),
        });
      }
      return { partitions };
    },
  };
}
