export { DelayTier, type DelayTierOptions } from './delay-tier.js';
export type { HotRecord } from './record.js';
export { createAdminServer, type AdminServerOptions } from './admin-server.js';
export type { TierAdmin, PartitionStatus, LookaheadState, RateLimit } from './admin.js';
export { LagHistory, type LagHistoryOptions } from './lag-history.js';
export { Ownership, type OwnershipHooks } from './ownership.js';
