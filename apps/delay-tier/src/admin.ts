/** A resource class's token bucket: refills at `ratePerSec`, holds at most `burst` tokens. */
export interface RateLimit {
  readonly ratePerSec: number;
  readonly burst: number;
}

export interface LookaheadState {
  /** What an operator (or the default) asked for. */
  readonly configuredMs: number;
  /** What the tier uses now: smaller than configured while Redis is under memory pressure. */
  readonly effectiveMs: number;
}

export interface PartitionStatus {
  readonly partition: number;
  /** Ownership epoch held by this instance, null while it is being taken. */
  readonly epoch: number | null;
  /** `fallback`: served from PostgreSQL only, no hot set. */
  readonly mode: 'hot' | 'fallback';
  readonly hotJobs: number;
  /** How long the oldest due job has been waiting; null when nothing is due. */
  readonly oldestDueAgeMs: number | null;
}

/**
 * What the admin HTTP server needs from a running delay tier. The server validates every input
 * before calling a setter. Throw a KairosError (e.g. DEPENDENCY_UNAVAILABLE when Redis is down)
 * to answer with its status; anything else is a 500.
 */
export interface TierAdmin {
  lookahead(): LookaheadState;
  setLookahead(ms: number): void;
  rateLimits(): Promise<Record<string, RateLimit>>;
  setRateLimit(resourceClass: string, limit: RateLimit): Promise<void>;
  clearRateLimit(resourceClass: string): Promise<void>;
  status(): Promise<{ partitions: PartitionStatus[] }>;
}
