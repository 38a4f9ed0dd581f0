import { EnvError, intVar } from './env.js';

/** The tracker's canary and where its alerts go. */
export interface CanaryEnv {
  /** KAIROS_CANARY_INTERVAL_MS, default 60,000: a canary per resource class this often; 0 turns the canary off. */
  readonly intervalMs: number;
  /** KAIROS_CANARY_STALL_MS, default 120,000: no canary of a class completing for this long raises canary_stalled. */
  readonly stallMs: number;
  /** KAIROS_ALERT_WEBHOOK_URL, default none: alerts are also posted there (Alertmanager's /api/v2/alerts shape). */
  readonly webhookUrl: string | undefined;
}

export function canaryEnv(env: NodeJS.ProcessEnv = process.env): CanaryEnv {
  const intervalMs = intVar(env, 'KAIROS_CANARY_INTERVAL_MS', 60_000, 0, 86_400_000);
  const stallMs = intVar(env, 'KAIROS_CANARY_STALL_MS', 120_000, 1000, 86_400_000);
  if (intervalMs !== 0 && intervalMs < 100)
    throw new EnvError(`KAIROS_CANARY_INTERVAL_MS=${intervalMs} must be 0 (off) or at least 100`);
  if (intervalMs !== 0 && stallMs <= intervalMs)
    throw new EnvError(
      `KAIROS_CANARY_STALL_MS=${stallMs} must be longer than KAIROS_CANARY_INTERVAL_MS=${intervalMs}`,
    );
  const webhookUrl = env.KAIROS_ALERT_WEBHOOK_URL || undefined;
  if (webhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(webhookUrl))
    throw new EnvError(`KAIROS_ALERT_WEBHOOK_URL=${webhookUrl} must be an http(s) URL`);
  return { intervalMs, stallMs, webhookUrl };
}
