import { LifecycleService, PollLoop } from '@kairos/core';
import { readJobGauges, type Pool } from '@kairos/db';
import type { GroupStatus } from '@kairos/kafka';
import { silentLogger, type Logger, type WatchMetrics } from '@kairos/observability';

/** The forecast's windows: jobs due within each, per class, for an autoscaler to act on early. */
export const FORECAST_WINDOWS: readonly { readonly label: string; readonly ms: number }[] = [
  { label: '1m', ms: 60_000 },
  { label: '5m', ms: 300_000 },
  { label: '15m', ms: 900_000 },
  { label: '1h', ms: 3_600_000 },
];

const LIVE_STATES = ['SCHEDULED', 'QUEUED', 'RUNNING'] as const;

export interface JobGaugesOptions {
  readonly pool: Pool;
  /** Job-events partitions (the jobs' shards). */
  readonly shards: number;
  /** Classes shown at 0 when they have no jobs (an absent series is not a 0). */
  readonly resourceClasses: readonly string[];
  readonly metrics: WatchMetrics;
  /** Kairos's consumer groups with their lag (none: the consumer lag gauge is not set). */
  readonly consumerGroups?: () => Promise<readonly GroupStatus[]>;
  /** A reading this often, ms. Default: 15,000. */
  readonly intervalMs?: number;
  readonly log?: Logger;
  /** Called after each reading (tests). */
  readonly onReading?: () => void;
}

/**
 * Reads the jobs' gauges every interval, in one PostgreSQL round trip served by indexes alone
 * (live jobs by state and class, dead letters, the oldest overdue job, the load forecast), and
 * the consumer groups' lag from Kafka. Each reading replaces the previous one whole, so a class
 * or group that went away does not linger.
 */
export class JobGauges extends LifecycleService {
  readonly #o: JobGaugesOptions;
  readonly #log: Logger;
  readonly #loop: PollLoop;

  constructor(options: JobGaugesOptions) {
    super('job gauges');
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    const intervalMs = options.intervalMs ?? 15_000;
    this.#loop = new PollLoop({
      round: async () => {
        await this.#read();
        return intervalMs;
      },
      intervalMs,
      onError: (err) => this.#log.warn({ err }, 'reading the job gauges failed; retrying next round'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  async #read(): Promise<void> {
    const m = this.#o.metrics;
    const r = await readJobGauges(
      this.#o.pool,
      this.#o.shards,
      FORECAST_WINDOWS.map((w) => w.ms),
    );
    const classes = new Set([...this.#o.resourceClasses, ...r.live.map((x) => x.resourceClass)]);
    m.jobs.reset();
    m.deadLetters.reset();
    m.oldestOverdue.reset();
    m.jobsDue.reset();
    for (const resource_class of classes) {
      for (const state of LIVE_STATES) m.jobs.set({ state, resource_class }, 0);
      m.deadLetters.set({ resource_class }, 0);
      m.oldestOverdue.set({ resource_class }, 0);
      for (const w of FORECAST_WINDOWS) m.jobsDue.set({ resource_class, window: w.label }, 0);
    }
    for (const x of r.live) m.jobs.set({ state: x.state, resource_class: x.resourceClass }, x.jobs);
    for (const x of r.deadLetters) m.deadLetters.set({ resource_class: x.resourceClass }, x.jobs);
    for (const x of r.oldestOverdue) m.oldestOverdue.set({ resource_class: x.resourceClass }, x.seconds);
    for (const x of r.dueWithin) {
      FORECAST_WINDOWS.forEach((w, i) =>
        m.jobsDue.set({ resource_class: x.resourceClass, window: w.label }, x.jobs[i] ?? 0),
      );
    }
    await this.#readConsumerLag();
    this.#o.onReading?.();
  }

  async #readConsumerLag(): Promise<void> {
    if (!this.#o.consumerGroups) return;
    try {
      const groups = await this.#o.consumerGroups();
      this.#o.metrics.consumerLag.reset();
      for (const g of groups) {
        for (const t of g.topics) this.#o.metrics.consumerLag.set({ group: g.group, topic: t.topic }, t.lag);
      }
    } catch (err) {
      this.#log.warn({ err }, 'reading consumer lag failed; retrying next round');
    }
  }
}
