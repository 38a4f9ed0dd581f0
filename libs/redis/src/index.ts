import { registerErrorRecogniser } from '@kairos/core';
import { recogniseRedisError } from './redis-errors.js';

export { createRedis, type RedisClient } from './client.js';
export { memoryUse } from './memory.js';
export { withScripts, scriptSource, type KairosScripts, type ScriptName } from './scripts.js';
export { partitionKeys, type PartitionKeys } from './keys.js';
export {
  HotSet,
  type HotSetOptions,
  type HotJob,
  type HotEvent,
  type EventOutcome,
  type HeldJob,
  type HotStats,
  type PopOptions,
  type PoppedJob,
  type PopResult,
  type ScheduleOptions,
  type ScheduleOutcome,
} from './hot-set.js';
export { RateLimiter, type RateLimiterOptions, type RateLimit, type TakeResult } from './rate-limiter.js';
export {
  Leases,
  type LeasesOptions,
  type AttemptRef,
  type ClaimRef,
  type AttemptState,
  type ClaimOutcome,
  type RenewOutcome,
  type ReapResult,
  type ReleaseOutcome,
  type AttemptRelease,
} from './leases.js';
export { redisReplyCode } from './redis-errors.js';

// Loading this package teaches classifyError Redis's errors.
registerErrorRecogniser(recogniseRedisError);
