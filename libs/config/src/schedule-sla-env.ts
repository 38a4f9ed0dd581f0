import { EnvError, intVar } from './env.js';

/** The tracker's SLA check of schedules (sla_ms), and the schedule label cap of the metrics. */
export interface ScheduleSlaEnv {
  /** KAIROS_SCHEDULE_SLA_INTERVAL_MS, default 1,000: the check sleeps until the next deadline, at least this long. */
  readonly intervalMs: number;
  /**
   * KAIROS_SCHEDULE_SLA_MAX_INTERVAL_MS, default 10,000: and at most this long (how late a run made
   * after it looked, such as a trigger, may be judged, and how soon a success clears an alert).
   */
  readonly maxIntervalMs: number;
  /** KAIROS_SCHEDULE_LABEL_LIMIT, default 100: schedules with their own metric label; the rest are `_other`. */
  readonly scheduleLabelLimit: number;
}

export function scheduleSlaEnv(env: NodeJS.ProcessEnv = process.env): ScheduleSlaEnv {
  const intervalMs = intVar(env, 'KAIROS_SCHEDULE_SLA_INTERVAL_MS', 1000, 10, 60_000);
  const maxIntervalMs = intVar(env, 'KAIROS_SCHEDULE_SLA_MAX_INTERVAL_MS', 10_000, 10, 600_000);
  if (maxIntervalMs < intervalMs)
    throw new EnvError(
      `KAIROS_SCHEDULE_SLA_MAX_INTERVAL_MS=${maxIntervalMs} must be at least KAIROS_SCHEDULE_SLA_INTERVAL_MS=${intervalMs}`,
    );
  const scheduleLabelLimit = intVar(env, 'KAIROS_SCHEDULE_LABEL_LIMIT', 100, 0, 10_000);
  return { intervalMs, maxIntervalMs, scheduleLabelLimit };
}
