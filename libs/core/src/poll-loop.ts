import { IdleBackoff } from './idle-backoff.js';
import { LifecycleService } from './lifecycle.js';

/**
 * What a round says about the next one: `true` more work is waiting (run again at once); a
 * finite number: pause that many ms (until its next deadline, e.g. the earliest due job);
 * `false`, nothing or Infinity: idle, pause by the loop's idle back-off.
 */
export type RoundOutcome = boolean | number | void;

export interface PollLoopOptions {
  /** Names the loop in errors (a refused restart). Default: 'poll loop'. */
  readonly name?: string;
  readonly round: () => Promise<RoundOutcome>;
  /** Pause after an idle round (and after a failed one), ms. */
  readonly intervalMs: number;
  /**
   * Idle back-off: each idle round in a row doubles the pause, from intervalMs up to this, ms.
   * Anything but an idle round, and wake(), start again from intervalMs. Default: intervalMs.
   */
  readonly maxIntervalMs?: number;
  readonly onError: (err: unknown) => void;
  /** Monotonic clock, ms (tests). Default: performance.now. */
  readonly now?: () => number;
}

/**
 * A background loop: runs `round` again and again until stopped, one round at a time, never
 * overlapping; a round's error goes to `onError` and the loop goes on. Between rounds it sleeps
 * for as long as the round asked (a computed deadline) or, after an idle round, by its idle
 * back-off. wake() and wakeIn() cut a pause short; one that comes during a round is kept and
 * shortens the pause after it, so no wake is ever lost. Timers only, no I/O.
 */
export class PollLoop extends LifecycleService {
  readonly #round: () => Promise<RoundOutcome>;
  readonly #onError: (err: unknown) => void;
  readonly #now: () => number;
  readonly #backoff: IdleBackoff;
  #running = false;
  #loop: Promise<void> | undefined;
  /** Re-arms the current pause to end at the given time; undefined while a round runs. */
  #rearm: ((atMs: number) => void) | undefined;
  /** Earliest wake asked for during the current round (absolute, on #now). */
  #wakeAt = Infinity;

  constructor(options: PollLoopOptions) {
    super(options.name ?? 'poll loop');
    if (!Number.isFinite(options.intervalMs) || options.intervalMs < 0)
      throw new RangeError(`intervalMs must be a non-negative number, got ${options.intervalMs}`);
    const max = options.maxIntervalMs ?? options.intervalMs;
    if (!Number.isFinite(max) || max < options.intervalMs)
      throw new RangeError(`maxIntervalMs must be a number >= intervalMs, got ${max}`);
    this.#round = options.round;
    this.#onError = options.onError;
    this.#now = options.now ?? (() => performance.now());
    this.#backoff = new IdleBackoff(options.intervalMs, max);
  }

  /** True from start() until stop() is called: a long round checks it to give up early. */
  get running(): boolean {
    return this.#running;
  }

  /** The first round starts at once. */
  protected onStart(): void {
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops after the current round (a pause ends at once). */
  protected async onStop(): Promise<void> {
    this.#running = false;
    this.#rearm?.(-Infinity);
    await this.#loop;
  }

  /** The next round starts now: ends the current pause, or skips the next one if a round runs. */
  wake(): void {
    this.#backoff.reset();
    this.wakeIn(0);
  }

  /**
   * The next round starts within `ms`: shortens the current pause if it would end later, or,
   * during a round, the pause after it. Never lengthens a pause.
   */
  wakeIn(ms: number): void {
    const at = this.#now() + Math.max(0, ms);
    if (this.#rearm) this.#rearm(at);
    else this.#wakeAt = Math.min(this.#wakeAt, at);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let outcome: RoundOutcome = false;
      try {
        outcome = await this.#round();
      } catch (err) {
        this.#onError(err);
      }
      if (!this.#running) break;
      // A deadline that is not a finite number (none known) counts as an idle round.
      const timed = typeof outcome === 'number' && Number.isFinite(outcome);
      const pause = timed ? Math.max(0, outcome as number) : this.#backoff.next(outcome !== true);
      if (timed) this.#backoff.reset();
      const now = this.#now();
      const woken = this.#wakeAt <= now;
      const at = Math.min(now + pause, this.#wakeAt);
      this.#wakeAt = Infinity;
      if (outcome === true || woken) continue;
      await this.#sleepUntil(at);
    }
  }

  /** Sleeps until `at`, or until a wake asks for an earlier time. */
  #sleepUntil(at: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let end = at;
      let timer: ReturnType<typeof setTimeout> | undefined;
      // The first arming always goes through a timer, even for a zero pause: an idle round that
      // asks for none must still let the event loop run (I/O, other timers) before the next.
      const arm = (first: boolean) => {
        clearTimeout(timer);
        const left = end - this.#now();
        if (left > 0 || first) {
          timer = setTimeout(() => arm(false), Math.max(0, left));
          return;
        }
        this.#rearm = undefined;
        resolve();
      };
      this.#rearm = (atMs) => {
        if (atMs >= end) return;
        end = atMs;
        arm(false);
      };
      arm(true);
    });
  }
}
