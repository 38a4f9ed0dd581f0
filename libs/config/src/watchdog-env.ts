import { intVar } from './env.js';

/** The tracker's reconciliation watchdog and gauges. */
export interface WatchdogEnv {
  /** KAIROS_WATCHDOG_INTERVAL_MS, default 30,000: a watchdog round this often; 0 turns it off. */
  readonly intervalMs: number;
  /** KAIROS_WATCHDOG_GRACE_MS, default 60,000: a SCHEDULED job this long past due (or a schedule's next run) is looked into. */
  readonly graceMs: number;
  /** KAIROS_WATCHDOG_QUEUED_TIMEOUT_MS, default 300,000: a QUEUED job no worker started for this long is reported. */
  readonly queuedTimeoutMs: number;
  /** KAIROS_WATCHDOG_RUNNING_TIMEOUT_MS, default 300,000: a RUNNING job this old without a lease is reported lost. */
  readonly runningTimeoutMs: number;
  /** KAIROS_WATCHDOG_OUTBOX_STALL_MS, default 60,000: outbox publication lag past this is a finding. */
  readonly outboxStallMs: number;
  /** KAIROS_GAUGES_INTERVAL_MS, default 15,000: jobs by state, dead letters, oldest overdue, forecast, consumer lag. */
  readonly gaugesIntervalMs: number;
}

export function watchdogEnv(env: NodeJS.ProcessEnv = process.env): WatchdogEnv {
  return {
    intervalMs: intVar(env, 'KAIROS_WATCHDOG_INTERVAL_MS', 30_000, 0, 3_600_000),
    graceMs: intVar(env, 'KAIROS_WATCHDOG_GRACE_MS', 60_000, 100, 86_400_000),
    queuedTimeoutMs: intVar(env, 'KAIROS_WATCHDOG_QUEUED_TIMEOUT_MS', 300_000, 1000, 86_400_000),
    runningTimeoutMs: intVar(env, 'KAIROS_WATCHDOG_RUNNING_TIMEOUT_MS', 300_000, 1000, 86_400_000),
    outboxStallMs: intVar(env, 'KAIROS_WATCHDOG_OUTBOX_STALL_MS', 60_000, 1000, 86_400_000),
    gaugesIntervalMs: intVar(env, 'KAIROS_GAUGES_INTERVAL_MS', 15_000, 0, 3_600_000),
  };
}
