export { DelayTier, type DelayTierOptions } from './delay-tier.js';
export type { HotRecord } from './record.js';
