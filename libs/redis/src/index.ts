export { withScripts, scriptSource, type KairosScripts, type ScriptName } from './scripts.js';
export { partitionKeys, type PartitionKeys } from './keys.js';
export {
  HotSet,
  type HotSetOptions,
  type HotJob,
  type HotStats,
  type PopOptions,
  type PoppedJob,
  type ScheduleOptions,
  type ScheduleOutcome,
} from './hot-set.js';
export { RateLimiter, type RateLimiterOptions, type RateLimit } from './rate-limiter.js';
export {
  Leases,
  type LeasesOptions,
  type AttemptRef,
  type ClaimOutcome,
  type RenewOutcome,
  type ReleaseOutcome,
  type AttemptRelease,
} from './leases.js';
