import type {
  AttemptRef,
  AttemptRelease,
  ClaimOutcome,
  ClaimRef,
  Leases,
  ReleaseOutcome,
  RenewOutcome,
} from '@kairos/redis';
import { TickBatch } from './tick-batch.js';

/**
 * This worker's lease calls, batched: the claims of tasks that start together, the renewals of
 * one heartbeat tick and the releases of attempts that finish together each go to Redis as one
 * pipeline (one script call per partition).
 */
export class BatchedLeases {
  readonly #leases: Leases;
  readonly #claims: TickBatch<ClaimRef, ClaimOutcome>;
  readonly #renewals: TickBatch<AttemptRef, RenewOutcome>;
  readonly #releases: TickBatch<AttemptRelease, ReleaseOutcome>;

  constructor(leases: Leases, workerId: string, leaseMs: number) {
    this.#leases = leases;
    this.#claims = new TickBatch((refs) => leases.claimMany(refs, workerId, leaseMs));
    this.#renewals = new TickBatch((refs) => leases.renewMany(refs, workerId, leaseMs));
    this.#releases = new TickBatch((releases) => leases.releaseMany(releases, workerId));
  }

  claim(attempt: ClaimRef): Promise<ClaimOutcome> {
    return this.#claims.add(attempt);
  }

  /** Whether Redis is at its maxmemory (it refuses writes). */
  full(): Promise<boolean> {
    return this.#leases.full();
  }

  renew(attempt: AttemptRef): Promise<RenewOutcome> {
    return this.#renewals.add(attempt);
  }

  release(attempt: AttemptRef, done: boolean): Promise<ReleaseOutcome> {
    return this.#releases.add({ attempt, done });
  }
}
