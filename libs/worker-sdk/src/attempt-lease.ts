import type { AttemptRef } from '@kairos/redis';
import { JobCancelled, ZombieWriteSuppressed } from './errors.js';
import type { BatchedLeases } from './lease-batches.js';

/**
 * The heartbeat of every running attempt of a worker: one timer, and on each tick every lease is
 * renewed (the renewals go to Redis together, see BatchedLeases), however many attempts run.
 */
export class Heartbeats {
  readonly #intervalMs: number;
  readonly #leases = new Set<AttemptLease>();
  #timer: NodeJS.Timeout | undefined;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  add(lease: AttemptLease): void {
    this.#leases.add(lease);
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      for (const l of this.#leases) l.renew().catch((err: unknown) => l.onRenewError(err));
    }, this.#intervalMs);
    this.#timer.unref();
  }

  delete(lease: AttemptLease): void {
    this.#leases.delete(lease);
    if (this.#leases.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

export interface AttemptLeaseOptions {
  readonly leases: BatchedLeases;
  readonly heartbeats: Heartbeats;
  /** The attempt must stop: cancelled, or this worker is a zombie for it. */
  readonly onStop: (reason: JobCancelled | ZombieWriteSuppressed) => void;
  readonly onError: (err: unknown) => void;
}

/**
 * The lease of one running attempt: renewed on every heartbeat tick while the handler runs.
 * A renewal that is refused (the lease was reaped: a newer attempt exists) or that reports a
 * cancel stops the attempt through `onStop`, at most once.
 */
export class AttemptLease {
  readonly #o: AttemptLeaseOptions;
  readonly #ref: AttemptRef;
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
    if (this.#leased) this.#o.heartbeats.add(this);
  }

  async renew(): Promise<void> {
    if (this.#stopped || !this.#leased) return;
    const r = await this.#o.leases.renew(this.#ref);
    if (r === 'CANCELLED') this.#stop(new JobCancelled(this.#ref.jobId));
    else if (r === 'ZOMBIE')
      this.#stop(new ZombieWriteSuppressed(this.#ref.jobId, this.#ref.fence, 'lease renewal refused'));
  }

  onRenewError(err: unknown): void {
    this.#o.onError(err);
  }

  /** Stops renewing and ends the lease: `done` once the result is durable. Detects a zombie too. */
  async release(done: boolean): Promise<void> {
    this.#o.heartbeats.delete(this);
    if (!this.#leased) return;
    const r = await this.#o.leases.release(this.#ref, done);
    if (r === 'ZOMBIE' && !(this.#stopped instanceof ZombieWriteSuppressed)) {
      this.#stop(new ZombieWriteSuppressed(this.#ref.jobId, this.#ref.fence, 'commit refused'));
    }
  }

  #stop(reason: JobCancelled | ZombieWriteSuppressed): void {
    if (this.#stopped) return;
    this.#stopped = reason;
    // Nothing to renew any more: the handler is being stopped.
    this.#o.heartbeats.delete(this);
    this.#o.onStop(reason);
  }
}
