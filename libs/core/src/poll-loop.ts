/**
 * A background loop: runs `round` again and again until stopped, pausing `intervalMs` after each
 * round unless the round says more work is waiting (returns true). One round at a time, never
 * overlapping; a round's error goes to `onError` and the loop goes on. `wake()` cuts a pause short.
 * Timers only, no I/O: the rounds bring their own.
 */
export class PollLoop {
  readonly #round: () => Promise<boolean | void>;
  readonly #intervalMs: number;
  readonly #onError: (err: unknown) => void;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** wake() came during a round: the next pause is skipped. */
  #woken = false;

  constructor(options: {
    readonly round: () => Promise<boolean | void>;
    readonly intervalMs: number;
    readonly onError: (err: unknown) => void;
  }) {
    if (!Number.isFinite(options.intervalMs) || options.intervalMs < 0)
      throw new RangeError(`intervalMs must be a non-negative number, got ${options.intervalMs}`);
    this.#round = options.round;
    this.#intervalMs = options.intervalMs;
    this.#onError = options.onError;
  }

  /** True from start() until stop() is called: a long round checks it to give up early. */
  get running(): boolean {
    return this.#running;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops after the current round (a pause ends at once). */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  /** The next round starts now: ends the current pause, or skips the next one if a round runs. */
  wake(): void {
    if (this.#wake) this.#wake();
    else this.#woken = true;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let again = false;
      try {
        again = (await this.#round()) === true;
      } catch (err) {
        this.#onError(err);
      }
      if (!this.#running || again) continue;
      if (this.#woken) {
        this.#woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#intervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
      this.#woken = false;
    }
  }
}
