import type { JobCommands } from '@kairos/commands';
import {
  AlertBook,
  CANARY_TENANT,
  CANARY_TYPE,
  canarySpec,
  canaryStalled,
  canaryStalledAlert,
  LifecycleService,
  PollLoop,
  type AlertChange,
} from '@kairos/core';
import { deleteOldCanaries, latestCanarySuccesses, type CanarySuccess, type Pool } from '@kairos/db';
import { silentLogger, type CanaryMetrics, type Logger } from '@kairos/observability';
import { sendAlerts } from './alert-webhook.js';

/** Sends alert changes somewhere people look (an Alertmanager-compatible webhook). */
export type AlertNotifier = (
  changes: readonly AlertChange[],
  active: ReturnType<AlertBook['active']>,
) => Promise<void>;

export interface CanaryOptions {
  /**
   * Creates the canaries. Its pool must not relay outbox rows after commit: canaries reach Kafka
   * through Debezium, the path they watch, or a stalled connector would go unnoticed.
   */
  readonly jobs: JobCommands;
  /** Reads the canaries' outcomes and deletes old ones. */
  readonly pool: Pool;
  readonly resourceClasses: readonly string[];
  readonly metrics: CanaryMetrics;
  /** A canary per class this often, ms. Default: 60,000. */
  readonly intervalMs?: number;
  /** No canary of a class succeeding for this long raises `canary_stalled` for it, ms. Default: 120,000. */
  readonly stallMs?: number;
  /** While a canary is out, how often its outcome is looked for, ms. Default: 1,000. */
  readonly checkMs?: number;
  readonly notify?: AlertNotifier;
  readonly log?: Logger;
  readonly now?: () => Date;
}

/** How long finished canaries are kept (their outcomes are read back for this long), ms. */
const KEEP_MS = 3_600_000;

/**
 * Sends a canary job per resource class through the whole pipeline every interval and raises
 * `canary_stalled` for a class none of whose canaries succeeded within stallMs: a metric, an error
 * log line and the notifier; it clears when one succeeds again. Sleeps between periods; looks for
 * the outcome every checkMs only while a canary is out or an alert holds.
 */
export class Canary extends LifecycleService {
  readonly #o: Required<Pick<CanaryOptions, 'intervalMs' | 'stallMs' | 'checkMs'>> & CanaryOptions;
  readonly #log: Logger;
  readonly #loop: PollLoop;
  readonly #alerts = new AlertBook();
  /** Newest success seen per class (its latency is observed once). */
  readonly #seen = new Map<string, CanarySuccess>();
  #watchingSince = 0;
  #period = -1;
  /** The current period's canaries were sent again for the classes still waiting. */
  #resent = false;

  constructor(options: CanaryOptions) {
    super('canary');
    const intervalMs = options.intervalMs ?? 60_000;
    const stallMs = options.stallMs ?? 120_000;
    const checkMs = options.checkMs ?? 1000;
    for (const [name, v, min] of [
      ['intervalMs', intervalMs, 100],
      ['stallMs', stallMs, 100],
      ['checkMs', checkMs, 10],
    ] as const)
      if (!Number.isInteger(v) || v < min)
        throw new RangeError(`${name} must be an integer >= ${min}, got ${v}`);
    if (stallMs <= intervalMs)
      throw new RangeError(`stallMs (${stallMs}) must be longer than intervalMs (${intervalMs})`);
    this.#o = { ...options, intervalMs, stallMs, checkMs };
    this.#log = options.log ?? silentLogger();
    for (const rc of options.resourceClasses)
      options.metrics.alertActive.set({ alert: 'canary_stalled', resource_class: rc }, 0);
    this.#loop = new PollLoop({
      name: 'canary',
      intervalMs: checkMs,
      round: () => this.round(),
      onError: (err) => this.#log.error({ err }, 'canary round failed; trying again'),
    });
  }

  protected onStart(): Promise<void> {
    this.#watchingSince = this.#now().getTime();
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: a new period's canaries, the outcomes, the alerts; returns how long to sleep, ms. */
  async round(): Promise<number> {
    const now = this.#now();
    const period = Math.floor(now.getTime() / this.#o.intervalMs);
    if (period !== this.#period) {
      await this.#send(this.#o.resourceClasses, now, false);
      // Only once sent: a failed round tries this period's canaries again.
      this.#period = period;
      this.#resent = false;
      await this.#housekeep(now);
    }
    const latest = await latestCanarySuccesses(
      this.#o.pool,
      CANARY_TENANT,
      CANARY_TYPE,
      new Date(now.getTime() - KEEP_MS),
    );
    const waiting = this.#record(latest);
    // A canary lost on its way (a failover can drop one: the pre-loader leaves canaries to the
    // event path) is sent again halfway through the period, so one loss does not page.
    const periodStart = period * this.#o.intervalMs;
    if (waiting.length > 0 && !this.#resent && now.getTime() - periodStart >= this.#o.intervalMs / 2) {
      await this.#send(waiting, now, true);
      this.#resent = true;
    }
    await this.#evaluate(now);
    const nextPeriod = (period + 1) * this.#o.intervalMs - now.getTime();
    const busy = waiting.length > 0 && now.getTime() - periodStart < this.#o.stallMs;
    if (!busy && this.#alerts.active().length === 0) return nextPeriod;
    // Waiting: look again soon, and wake for the resend halfway through.
    const resendIn = this.#resent ? Infinity : periodStart + this.#o.intervalMs / 2 - now.getTime();
    return Math.max(0, Math.min(this.#o.checkMs, nextPeriod, resendIn));
  }

  async #send(classes: readonly string[], now: Date, again: boolean): Promise<void> {
    const specs = classes.map((rc) => canarySpec(rc, now, this.#o.intervalMs, again));
    const made = await this.#o.jobs.createSystemJobs(specs);
    for (const r of made) if (r.created) this.#o.metrics.created.inc({ resource_class: r.job.resourceClass });
  }

  async #housekeep(now: Date): Promise<void> {
    const gone = await deleteOldCanaries(
      this.#o.pool,
      CANARY_TENANT,
      CANARY_TYPE,
      new Date(now.getTime() - KEEP_MS),
    );
    if (gone > 0) this.#log.info({ deleted: gone }, 'old canaries deleted');
    // Alertmanager forgets an alert that is not sent again: the active ones go out every period.
    const active = this.#alerts.active();
    if (active.length > 0) await this.#notify([], active);
  }

  /** Records new successes; the classes whose canary of this period has not succeeded yet. */
  #record(latest: readonly CanarySuccess[]): string[] {
    for (const s of latest) {
      if (this.#seen.get(s.resourceClass)?.jobId === s.jobId) continue;
      this.#seen.set(s.resourceClass, s);
      this.#o.metrics.lastSuccess.set({ resource_class: s.resourceClass }, s.finishedAt.getTime() / 1000);
      this.#o.metrics.latency.observe({ resource_class: s.resourceClass }, s.latencyMs / 1000);
    }
    const periodStart = this.#period * this.#o.intervalMs;
    return this.#o.resourceClasses.filter(
      (rc) => (this.#seen.get(rc)?.finishedAt.getTime() ?? 0) < periodStart,
    );
  }

  async #evaluate(now: Date): Promise<void> {
    const changes: AlertChange[] = [];
    for (const rc of this.#o.resourceClasses) {
      const last = this.#seen.get(rc)?.finishedAt.getTime() ?? null;
      const stalled = canaryStalled(last, this.#watchingSince, now.getTime(), this.#o.stallMs);
      const alert = canaryStalledAlert(rc, this.#o.stallMs);
      const change = this.#alerts.set(alert, stalled, now);
      if (!change) continue;
      changes.push(change);
      this.#o.metrics.alertActive.set({ alert: 'canary_stalled', resource_class: rc }, stalled ? 1 : 0);
      if (stalled)
        this.#log.error(
          { alert: 'canary_stalled', resource_class: rc, lastSuccess: last && new Date(last) },
          alert.summary,
        );
      else
        this.#log.info(
          { alert: 'canary_stalled', resource_class: rc },
          `canaries of ${rc} complete again: alert cleared`,
        );
    }
    if (changes.length > 0) await this.#notify(changes, this.#alerts.active());
  }

  #notify(changes: readonly AlertChange[], active: ReturnType<AlertBook['active']>): Promise<void> {
    return sendAlerts(this.#o.notify, changes, active, this.#log);
  }

  /** The alerts holding now. */
  activeAlerts(): ReturnType<AlertBook['active']> {
    return this.#alerts.active();
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}
