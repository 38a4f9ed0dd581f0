import type { AttemptRef, Leases } from '@kairos/redis';
import { JobCancelled, ZombieWriteSuppressed } from './errors.js';

export interface AttemptLeaseOptions {
  readonly leases: Leases;
  readonly workerId: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** The attempt must stop: cancelled, or this worker is a zombie for it. */
  readonly onStop: (reason: JobCancelled | ZombieWriteSuppressed) => void;
  readonly onError: (err: unknown) => void;
}

/**
 * The lease of one running attempt: renewed every heartbeat interval while the handler runs.
 * A renewal that is refused (the lease was reaped: a newer attempt exists) or that reports a
 * cancel stops the attempt through `onStop`, at most once.
 */
export class AttemptLease {
  readonly #o: AttemptLeaseOptions;
  readonly #ref: AttemptRef;
  #timer: NodeJS.Timeout | undefined;
  #stopped: JobCancelled | ZombieWriteSuppressed | undefined;
  /** False when the attempt runs without a lease (Redis refused the claim for memory). */
  readonly #leased: boolean;

  constructor(ref: AttemptRef, leased: boolean, options: AttemptLeaseOptions) {
    this.#ref = ref;
    this.#leased = leased;
    this.#o = options;
  }

  /** Why the attempt was stopped, if it was. */
  get stopped(): JobCancelled | ZombieWriteSuppressed | undefined {
    return this.#stopped;
  }

  start(): void {
    if (!this.#leased) return;
    this.#timer = setInterval(() => {
      this.renew().catch(this.#o.onError);
    }, this.#o.heartbeatMs);
    this.#timer.unref();
  }

  async renew(): Promise<void> {
    if (this.#stopped || !this.#leased) return;
    const r = await this.#o.leases.renew(this.#ref, this.#o.workerId, this.#o.leaseMs);
    if (r === 'CANCELLED') this.#stop(new JobCancelled(this.#ref.jobId));
    else if (r === 'ZOMBIE')
      this.#stop(new ZombieWriteSuppressed(this.#ref.jobId, this.#ref.fence, 'lease renewal refused'));
  }

  /** Stops renewing and ends the lease: `done` once the result is durable. Detects a zombie too. */
  async release(done: boolean): Promise<void> {
    clearInterval(this.#timer);
    if (!this.#leased) return;
    const r = await this.#o.leases.release(this.#ref, this.#o.workerId, done);
    if (r === 'ZOMBIE' && !(this.#stopped instanceof ZombieWriteSuppressed)) {
      this.#stop(new ZombieWriteSuppressed(this.#ref.jobId, this.#ref.fence, 'commit refused'));
    }
  }

  #stop(reason: JobCancelled | ZombieWriteSuppressed): void {
    if (this.#stopped) return;
    this.#stopped = reason;
    this.#o.onStop(reason);
  }
}
