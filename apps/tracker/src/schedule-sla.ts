import {
  AlertBook,
  LifecycleService,
  PollLoop,
  SLA_ALERT,
  slaAlert,
  slaSleepMs,
  type AlertChange,
} from '@kairos/core';
import {
  inTransaction,
  judgeScheduleRuns,
  nextSlaDeadlineMs,
  schedulesInBreach,
  type Pool,
  type SlaBreach,
} from '@kairos/db';
import { silentLogger, type CanaryMetrics, type Logger, type ScheduleMetrics } from '@kairos/observability';
import { sendAlerts } from './alert-webhook.js';
import type { AlertNotifier } from './canary.js';

export interface ScheduleSlaOptions {
  readonly pool: Pool;
  /** kairos_schedule_runs_total (late runs) and its schedule label cap. */
  readonly metrics: ScheduleMetrics;
  /** kairos_alert_active (shared with the canary). */
  readonly alertActive: CanaryMetrics['alertActive'];
  /**
   * Shortest pause between rounds, ms: a round sleeps until the earliest SLA deadline of a run not
   * judged yet, but at least this long. Default: 1,000.
   */
  readonly intervalMs?: number;
  /**
   * Longest pause, ms: bounds how late a run created after the round looked (a trigger, a new
   * schedule) is judged, and how soon a success clears an alert. Default: 10,000.
   */
  readonly maxIntervalMs?: number;
  /** Active alerts are sent to the notifier again this often (Alertmanager forgets them), ms. Default: 60,000. */
  readonly resendMs?: number;
  readonly notify?: AlertNotifier;
  readonly log?: Logger;
  readonly now?: () => Date;
}

/**
 * The dead-man's switch of schedules with an SLA (sla_ms). Each round judges, in PostgreSQL, the
 * runs whose deadline (fire time + sla_ms) has passed, once each: a run not SUCCEEDED by then is
 * late (counted in kairos_schedule_runs_total{outcome="late"} and the schedule's late_runs). A
 * schedule with a late run and no success of a later one since raises `schedule_sla_missed`: the
 * metric kairos_alert_active{alert="schedule_sla_missed",schedule}, an error log line and the
 * notifier; it clears when a later run succeeds (or the SLA is removed, the schedule paused or
 * deleted). Sleeps until the next deadline, within [intervalMs, maxIntervalMs].
 */
export class ScheduleSla extends LifecycleService {
  readonly #o: ScheduleSlaOptions;
  readonly #log: Logger;
  readonly #loop: PollLoop;
  readonly #alerts = new AlertBook();
  /** Label values of the alert gauge set so far (bounded by the schedule label cap). */
  readonly #labels = new Set<string>();
  readonly #resendMs: number;
  #sentAt = 0;

  constructor(options: ScheduleSlaOptions) {
    super('schedule SLA check');
    const interval = options.intervalMs ?? 1000;
    const max = options.maxIntervalMs ?? Math.max(10_000, interval);
    this.#resendMs = options.resendMs ?? 60_000;
    if (!Number.isInteger(interval) || interval < 10)
      throw new RangeError(`intervalMs must be an integer >= 10, got ${interval}`);
    if (!Number.isInteger(max) || max < interval)
      throw new RangeError(`maxIntervalMs must be an integer >= intervalMs (${interval}), got ${max}`);
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.#loop = new PollLoop({
      name: 'schedule SLA check',
      intervalMs: interval,
      round: async () => {
        await this.round();
        return slaSleepMs(await nextSlaDeadlineMs(this.#o.pool), interval, max);
      },
      onError: (err) => this.#log.error({ err }, 'schedule SLA check failed; trying again'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: judge the runs whose deadline passed, then raise and clear alerts. */
  async round(): Promise<void> {
    const judged = await inTransaction(this.#o.pool, (tx) => judgeScheduleRuns(tx));
    for (const j of judged ?? []) {
      if (j.late === 0) continue;
      this.#o.metrics.runs(j.scheduleId, 'late', j.late);
      this.#log.warn(
        { scheduleId: j.scheduleId, tenant: j.tenantId, slaMs: j.slaMs, late: j.late },
        'runs of a schedule did not succeed within its sla_ms',
      );
    }
    await this.#evaluate(await schedulesInBreach(this.#o.pool), this.#o.now?.() ?? new Date());
  }

  async #evaluate(breaches: readonly SlaBreach[], now: Date): Promise<void> {
    const changes: AlertChange[] = [];
    const holding = new Set(breaches.map((b) => b.scheduleId));
    for (const b of breaches) {
      const change = this.#alerts.set(
        slaAlert(b.scheduleId, b.tenantId, b.slaMs, b.lateOccurrenceAt),
        true,
        now,
      );
      if (!change) continue;
      changes.push(change);
      this.#log.error(
        {
          alert: SLA_ALERT,
          scheduleId: b.scheduleId,
          tenant: b.tenantId,
          slaMs: b.slaMs,
          lateRun: b.lateOccurrenceAt,
        },
        change.alert.summary,
      );
    }
    for (const { alert } of this.#alerts.active()) {
      const id = alert.labels.schedule ?? '';
      if (holding.has(id)) continue;
      const change = this.#alerts.set(alert, false, now);
      if (!change) continue;
      changes.push(change);
      this.#log.info(
        { alert: SLA_ALERT, scheduleId: id },
        `schedule ${id} is within its SLA again: alert cleared`,
      );
    }
    this.#gauge();
    const resend = this.#alerts.active().length > 0 && now.getTime() - this.#sentAt >= this.#resendMs;
    if (changes.length > 0 || resend) await this.#notify(changes, now);
  }

  /** One series per label value: 1 while any schedule under it (its own, or `_other`) alerts. */
  #gauge(): void {
    const on = new Set(
      this.#alerts.active().map((a) => this.#o.metrics.label(a.alert.labels.schedule ?? '')),
    );
    for (const l of on) this.#labels.add(l);
    for (const l of this.#labels)
      this.#o.alertActive.set({ alert: SLA_ALERT, schedule: l }, on.has(l) ? 1 : 0);
  }

  #notify(changes: readonly AlertChange[], now: Date): Promise<void> {
    this.#sentAt = now.getTime();
    return sendAlerts(this.#o.notify, changes, this.#alerts.active(), this.#log);
  }
}
