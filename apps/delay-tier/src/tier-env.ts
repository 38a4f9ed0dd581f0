import { EnvError, intVar } from '@kairos/config';

/** The delay tier's own settings, read from the environment at its entry point. */
export interface TierEnv {
  /** KAIROS_DELAY_TIER_ADMIN_PORT: admin and /metrics HTTP port, default 58091 (0 = random). */
  readonly adminPort: number;
  /** KAIROS_DELAY_TIER_ADMIN_HOST, default 127.0.0.1 (/admin/* needs an `admin` API key; /metrics is open). */
  readonly adminHost: string;
  /** KAIROS_LOOKAHEAD_MS, default 3,600,000 (60 min). */
  readonly lookaheadMs: number;
  /** KAIROS_MIN_LOOKAHEAD_MS (window under Redis memory pressure), default 60,000. */
  readonly minLookaheadMs: number;
  /** KAIROS_PRE_DISPATCH_MS (release this early; workers hold until due), default 0 (off). */
  readonly preDispatchMs: number;
  /** KAIROS_TENANT_WEIGHTS, `tenant=weight,...`, default none (every tenant weighs 1). */
  readonly tenantWeights: Map<string, number>;
  /** KAIROS_OVERLAP_RECHECK_MS: a schedule's run waiting behind its previous run (buffer_one) is looked at again after this, default 500. */
  readonly overlapRecheckMs: number;
  /** KAIROS_VERSION_TTL_SECONDS: how long a job's version marker stays in Redis, default 604,800 (7 days). */
  readonly versionTtlSeconds: number;
  /** KAIROS_DISPATCH_CONCURRENCY: PostgreSQL-only partitions dispatched at once, default 1. */
  readonly dispatchConcurrency: number;
  /** KAIROS_DISPATCH_MAX_SLEEP_MS: longest the dispatcher leaves a partition unvisited (safety net), default 1,000. */
  readonly dispatchMaxSleepMs: number;
  /** KAIROS_PRELOAD_MAX_INTERVAL_MS: the idle pre-loader's longest pause, default 10,000. */
  readonly preloadMaxIntervalMs: number;
  /** KAIROS_WAITING_ALERT_AFTER_MS: a task waiting this long for a handler raises KairosTasksWaiting, default 300,000. */
  readonly waitingAlertAfterMs: number;
}

export function tierEnv(env: NodeJS.ProcessEnv = process.env): TierEnv {
  const weights = new Map<string, number>();
  for (const pair of (env.KAIROS_TENANT_WEIGHTS ?? '').split(',').filter((s) => s.trim() !== '')) {
    const [tenant, w] = pair.split('=').map((s) => s.trim());
    const weight = Number(w);
    if (!tenant || !Number.isInteger(weight) || weight < 1 || weight > 1000) {
      throw new EnvError(`KAIROS_TENANT_WEIGHTS entry "${pair}" must be tenant=<integer 1..1000>`);
    }
    weights.set(tenant, weight);
  }
  return {
    adminPort: intVar(env, 'KAIROS_DELAY_TIER_ADMIN_PORT', 58091, 0, 65535),
    adminHost: env.KAIROS_DELAY_TIER_ADMIN_HOST ?? '127.0.0.1',
    lookaheadMs: intVar(env, 'KAIROS_LOOKAHEAD_MS', 3_600_000, 1000, 86_400_000),
    minLookaheadMs: intVar(env, 'KAIROS_MIN_LOOKAHEAD_MS', 60_000, 1000, 86_400_000),
    preDispatchMs: intVar(env, 'KAIROS_PRE_DISPATCH_MS', 0, 0, 60_000),
    tenantWeights: weights,
    overlapRecheckMs: intVar(env, 'KAIROS_OVERLAP_RECHECK_MS', 500, 10, 60_000),
    versionTtlSeconds: intVar(env, 'KAIROS_VERSION_TTL_SECONDS', 604_800, 60, 31_536_000),
    dispatchConcurrency: intVar(env, 'KAIROS_DISPATCH_CONCURRENCY', 1, 1, 32),
    dispatchMaxSleepMs: intVar(env, 'KAIROS_DISPATCH_MAX_SLEEP_MS', 1000, 10, 60_000),
    preloadMaxIntervalMs: intVar(env, 'KAIROS_PRELOAD_MAX_INTERVAL_MS', 10_000, 1000, 600_000),
    waitingAlertAfterMs: intVar(env, 'KAIROS_WAITING_ALERT_AFTER_MS', 300_000, 1000, 86_400_000),
  };
}
