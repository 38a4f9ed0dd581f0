import { LifecycleService, PollLoop } from '@kairos/core';
import { silentLogger, type Logger } from '@kairos/observability';
import {
  failLeaselessRunning,
  findStuckQueued,
  nudgeStalledSchedules,
  reenterLostJobs,
  type CheckDeps,
  type ScanCursors,
} from './watchdog-checks.js';

export interface WatchdogOptions extends Omit<
  CheckDeps,
  'log' | 'graceMs' | 'queuedTimeoutMs' | 'runningTimeoutMs' | 'batch'
> {
  /** A round this often, ms. Default: 30,000. */
  readonly intervalMs?: number;
  /** A SCHEDULED job (or a schedule's next run) this long past due is looked into, ms. Default: 60,000. */
  readonly graceMs?: number;
  /** A QUEUED job no worker started for this long is reported, ms. Default: 300,000. */
  readonly queuedTimeoutMs?: number;
  /** A RUNNING job this old without a lease is failed as lost, ms. Default: 300,000. */
  readonly runningTimeoutMs?: number;
  /** Outbox publication lag, ms, when known (the outbox heartbeat); past outboxStallMs it is a finding. */
  readonly outboxLagMs?: () => number | undefined;
  /** Default: 60,000. */
  readonly outboxStallMs?: number;
  /** Most jobs looked at per check per round. Default: 500. */
  readonly batch?: number;
  readonly log?: Logger;
  /** Called after each round with what it repaired (tests). */
  readonly onRound?: (repaired: WatchdogRound) => void;
}

export interface WatchdogRound {
  readonly reentered: number;
  readonly stuckQueued: number;
  readonly leaselessFailed: number;
  readonly schedulesNudged: number;
}

/**
 * The reconciliation watchdog (DESIGN invariant 7): an independent loop, not the dispatcher
 * checking itself, that compares what PostgreSQL says should be happening with what Redis and
 * Kafka show, and mends what it can: SCHEDULED jobs past due that no hot set holds (re-entered
 * through their owner), QUEUED jobs no worker started (reported), RUNNING jobs whose lease was
 * lost (failed as the reaper would), schedules whose next run was not generated (nudged), and an
 * outbox that stopped reaching Kafka (reported). Every finding and repair is counted and logged.
 * Each check's failure is logged and the others still run.
 */
export class Watchdog extends LifecycleService {
  readonly #d: CheckDeps;
  readonly #o: WatchdogOptions;
  readonly #loop: PollLoop;
  readonly #reentered = new Map<string, number>();
  readonly #reportedQueued = new Set<string>();
  readonly #cursors: ScanCursors = { overdue: null, queued: null, running: null };
  #outboxStalled = false;

  constructor(options: WatchdogOptions) {
    super('reconciliation watchdog');
    this.#o = options;
    this.#d = {
      ...options,
      log: options.log ?? silentLogger(),
      graceMs: options.graceMs ?? 60_000,
      queuedTimeoutMs: options.queuedTimeoutMs ?? 300_000,
      runningTimeoutMs: options.runningTimeoutMs ?? 300_000,
      batch: options.batch ?? 500,
    };
    const intervalMs = options.intervalMs ?? 30_000;
    this.#loop = new PollLoop({
      round: async () => {
        await this.#round();
        return intervalMs;
      },
      intervalMs,
      onError: (err) => this.#d.log.error({ err }, 'watchdog round failed'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  async #round(): Promise<void> {
    const now = Date.now();
    for (const [id, until] of this.#reentered) if (until <= now) this.#reentered.delete(id);
    if (this.#reportedQueued.size > 100_000) this.#reportedQueued.clear();
    const round: WatchdogRound = {
      reentered: await this.#check('lost_scheduled', () =>
        reenterLostJobs(this.#d, this.#reentered, now, this.#cursors),
      ),
      stuckQueued: await this.#check('stuck_queued', () =>
        findStuckQueued(this.#d, this.#reportedQueued, this.#cursors),
      ),
      leaselessFailed: await this.#check('running_without_lease', () =>
        failLeaselessRunning(this.#d, now, this.#cursors),
      ),
      schedulesNudged: await this.#check('schedule_not_generated', () => nudgeStalledSchedules(this.#d)),
    };
    this.#checkOutbox();
    this.#o.onRound?.(round);
  }

  async #check(kind: string, run: () => Promise<number>): Promise<number> {
    try {
      return await run();
    } catch (err) {
      this.#d.log.error({ err, kind }, 'watchdog check failed; the others ran');
      return 0;
    }
  }

  /** One finding per stall: when the outbox lag passes the threshold, not every round after. */
  #checkOutbox(): void {
    const lagMs = this.#o.outboxLagMs?.();
    const stalled = lagMs !== undefined && lagMs > (this.#o.outboxStallMs ?? 60_000);
    if (stalled && !this.#outboxStalled) {
      this.#d.metrics.findings.inc({ kind: 'outbox_stalled' });
      this.#d.log.error(
        { kind: 'outbox_stalled', lagMs },
        'watchdog: outbox rows are not reaching Kafka (is the Debezium connector running?)',
      );
    }
    this.#outboxStalled = stalled;
  }
}
