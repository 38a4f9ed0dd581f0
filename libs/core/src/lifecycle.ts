/**
 * Where a service is in its one life: idle → starting → started → stopping → stopped. A start or
 * stop that throws leaves it `failed`; stop() then releases whatever the failed step left behind.
 */
export type ServiceState = 'idle' | 'starting' | 'started' | 'stopping' | 'stopped' | 'failed';

/** Anything with a life to start and stop: loops, consumers, whole apps. */
export interface Service {
  readonly state: ServiceState;
  /** Starts once; again while starting or started, the same start. Refused once stopped. */
  start(): Promise<void>;
  /** Stops once (every call shares it); waits for a start in progress first. */
  stop(): Promise<void>;
}

/** What a service does on start and on stop; stop must cope with a start that failed half-way. */
export interface LifecycleSteps {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * One service's state machine around its start and stop steps, so every loop and app answers
 * start/stop the same way: repeated calls are harmless, a stopped service never comes back (its
 * resources are gone; build a new one), and its state says which of these it is in.
 */
export class Lifecycle implements Service {
  readonly name: string;
  readonly #steps: LifecycleSteps;
  #state: ServiceState = 'idle';
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;

  constructor(name: string, steps: LifecycleSteps) {
    this.name = name;
    this.#steps = steps;
  }

  get state(): ServiceState {
    return this.#state;
  }

  start(): Promise<void> {
    if (this.#state === 'idle') this.#starting = this.#start();
    else if (this.#state !== 'starting' && this.#state !== 'started')
      return Promise.reject(new Error(`${this.name} cannot start: it is ${this.#state} (create a new one)`));
    return this.#starting ?? Promise.resolve();
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #start(): Promise<void> {
    this.#state = 'starting';
    try {
      await this.#steps.start();
    } catch (err) {
      this.#state = 'failed';
      throw err;
    }
    this.#state = 'started';
  }

  async #stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped';
      return;
    }
    if (this.#state === 'starting') await this.#starting?.catch(() => undefined);
    this.#state = 'stopping';
    try {
      await this.#steps.stop();
    } catch (err) {
      this.#state = 'failed';
      throw err;
    }
    this.#state = 'stopped';
  }
}

/**
 * A class with a life of its own: it says how it starts and stops (onStart, onStop, called at
 * most once each) and inherits the one lifecycle's start, stop and state.
 */
export abstract class LifecycleService implements Service {
  readonly #life: Lifecycle;

  constructor(name: string) {
    this.#life = new Lifecycle(name, { start: () => this.onStart(), stop: () => this.onStop() });
  }

  get state(): ServiceState {
    return this.#life.state;
  }

  start(): Promise<void> {
    return this.#life.start();
  }

  stop(): Promise<void> {
    return this.#life.stop();
  }

  protected abstract onStart(): Promise<void> | void;
  /** Must cope with a start that failed half-way. */
  protected abstract onStop(): Promise<void> | void;
}

/**
 * Services started one after another in dependency order (each may use those before it) and
 * stopped in reverse. A start that fails stops those already started (and the one that failed,
 * to release what it held) and rethrows; a stop that fails still stops the rest, then rethrows.
 */
export function serviceGroup(name: string, services: readonly Service[]): Lifecycle {
  /** Services asked to start and not stopped yet, in start order. */
  const begun: Service[] = [];
  const stopBegun = async (): Promise<unknown[]> => {
    const errors: unknown[] = [];
    for (const s of begun.splice(0).reverse()) await s.stop().catch((err: unknown) => errors.push(err));
    return errors;
  };
  return new Lifecycle(name, {
    async start() {
      for (const s of services) {
        begun.push(s);
        try {
          await s.start();
        } catch (err) {
          const errors = await stopBegun();
          if (errors.length === 0) throw err;
          throw new AggregateError([err, ...errors], `${name}: start failed, and so did stopping`, {
            cause: err,
          });
        }
      }
    },
    async stop() {
      const errors = await stopBegun();
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1)
        throw new AggregateError(errors, `${name}: ${errors.length} services failed to stop`);
    },
  });
}
