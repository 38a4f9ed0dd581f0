import { DEFAULT_GENERATION, generateOccurrences, type GenerationSettings } from '@kairos/commands';
import { inTransaction, lockSchedule, nextGenerationAt, schedulesToGenerate, type Pool } from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';
import { silentLogger, type Logger, type ScheduleMetrics } from '@kairos/observability';
import { LifecycleService, PollLoop } from '@kairos/core';

export interface ScheduleGeneratorOptions {
  readonly pool: Pool;
  readonly codec: AvroCodec;
  /** Topic of job events (the connector's route for the outbox rows). */
  readonly jobEventsTopic: string;
  /** Lookahead, minimum ahead, most per pass (DEFAULT_GENERATION). */
  readonly settings?: Partial<GenerationSettings>;
  /**
   * Shortest pause between rounds, ms: a round sleeps until the earliest generation time or
   * misfire point in PostgreSQL, but at least this long (one that stays due, e.g. a run of a
   * paused schedule, is not polled faster than this). Default: 1,000.
   */
  readonly intervalMs?: number;
  /**
   * Longest pause, ms. API and ingest generate a schedule's first runs themselves when they
   * create or change it, leaving the generator times at least the generation lookahead (120 s)
   * ahead; what this bounds is a misfire decision on a run created after the round looked.
   * Default: 10,000.
   */
  readonly maxIntervalMs?: number;
  /** Most schedules locked per query (it queries again while there are more). Default: 100. */
  readonly batch?: number;
  readonly log?: Logger;
  /** Counts runs the misfire policy skipped (kairos_schedule_runs_total{outcome="misfired"}). */
  readonly metrics?: ScheduleMetrics;
  /** Clock. Default: the system clock. */
  readonly now?: () => Date;
}

export interface GeneratorTick {
  /** Schedules generated this tick. */
  readonly schedules: number;
  readonly created: number;
  readonly released: number;
  readonly skipped: number;
  readonly dropped: number;
  /** Schedules whose pass failed (retried next tick). */
  readonly failed: number;
}

/**
 * Generates the occurrences of recurring schedules ahead of time. Every interval it takes the
 * active schedules whose generation time has come (their next occurrence entered the lookahead,
 * or fewer than minAhead generated runs remain) and those with runs waiting for a misfire
 * decision, and runs one generation pass per schedule, each in its own transaction holding the
 * schedule row `FOR UPDATE SKIP LOCKED`: several trackers share the work and never generate a
 * schedule twice (and the occurrence ledger makes a repeated occurrence a no-op anyway). The
 * cursor and the jobs commit together, so a restart resumes exactly where the last commit left it.
 */
export class ScheduleGenerator extends LifecycleService {
  readonly #o: ScheduleGeneratorOptions;
  readonly #log: Logger;
  readonly #settings: GenerationSettings;
  readonly #loop: PollLoop;

  constructor(options: ScheduleGeneratorOptions) {
    super('schedule generator');
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.#settings = { ...DEFAULT_GENERATION, ...options.settings };
    const interval = options.intervalMs ?? 1000;
    if (!Number.isInteger(interval) || interval < 10)
      throw new RangeError(`intervalMs must be >= 10, got ${interval}`);
    const max = options.maxIntervalMs ?? Math.max(10_000, interval);
    if (!Number.isInteger(max) || max < interval)
      throw new RangeError(`maxIntervalMs must be an integer >= intervalMs (${interval}), got ${max}`);
    this.#loop = new PollLoop({
      round: async () => {
        await this.tick();
        // Sleep until PostgreSQL's next generation time, within [interval, max].
        const next = await nextGenerationAt(this.#o.pool);
        const now = (this.#o.now?.() ?? new Date()).getTime();
        return Math.min(max, Math.max(interval, next === null ? max : next.getTime() - now));
      },
      intervalMs: interval,
      onError: (err) => this.#log.error({ err }, 'schedule generation failed; retrying next interval'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  /** stop() was called: the rest of a round waits for the next tracker. */
  #stopCalled(): boolean {
    return this.#loop.state === 'stopping' || this.#loop.state === 'stopped';
  }

  /** One round: every schedule due for generation now, each once. */
  async tick(): Promise<GeneratorTick> {
    const done = new Set<string>();
    const totals = { schedules: 0, created: 0, released: 0, skipped: 0, dropped: 0, failed: 0 };
    const batch = this.#o.batch ?? 100;
    for (;;) {
      const now = this.#o.now?.() ?? new Date();
      const ids = (await schedulesToGenerate(this.#o.pool, now, batch + done.size)).filter(
        (id) => !done.has(id),
      );
      if (ids.length === 0) break;
      for (const id of ids) {
        if (this.#stopCalled()) return totals;
        done.add(id);
        try {
          const r = await inTransaction(this.#o.pool, async (tx) => {
            const s = await lockSchedule(tx, id, true);
            if (!s) return undefined; // another tracker (or a command) holds it
            const at = (this.#o.now?.() ?? new Date()).getTime();
            return generateOccurrences(
              tx,
              { codec: this.#o.codec, jobEventsTopic: this.#o.jobEventsTopic, settings: this.#settings },
              s,
              at,
            );
          });
          if (!r) continue;
          totals.schedules++;
          totals.created += r.created.length;
          totals.released += r.released;
          totals.skipped += r.skipped;
          totals.dropped += r.dropped;
          this.#o.metrics?.runs(id, 'misfired', r.skipped + r.dropped);
          if (r.released + r.skipped + r.dropped > 0) {
            this.#log.warn(
              {
                scheduleId: id,
                policy: r.schedule.misfire.kind,
                released: r.released,
                skipped: r.skipped,
                dropped: r.dropped,
                created: r.created.length,
              },
              'misfire policy applied to runs that missed their time',
            );
          }
        } catch (err) {
          totals.failed++;
          this.#log.error({ err, scheduleId: id }, 'generation of a schedule failed; retrying next interval');
        }
      }
      if (ids.length < batch) break;
    }
    return totals;
  }
}
