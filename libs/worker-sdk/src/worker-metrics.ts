import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ClassSlots } from './slots.js';

/** What the worker's gauges read when Prometheus scrapes. */
export interface WorkerMetricsSource {
  /** Handlers running now. */
  inFlight(): number;
  /** Each resource class the worker serves, and the slots its running handlers hold by kind. */
  slots(): Iterable<readonly [resourceClass: string, slots: ClassSlots]>;
  /** Each job type with a handler, and its circuit breaker's state. */
  breakers(): Iterable<readonly [jobType: string, state: 'closed' | 'open' | 'ramping']>;
}

/** The worker's metrics, in the registry the service passes in (`metrics` option). */
export interface WorkerMetrics {
  /** A handler ran for this long, ms; `outcome` is `succeeded` or the failure class. */
  handled(jobType: string, outcome: string, ms: number): void;
  /** A lease renewal could not reach Redis (the lease may lapse and the job run again). */
  renewalFailed(): void;
  /** This worker learned it was a zombie on an attempt. */
  zombie(): void;
  /** A task was not run: its claim said why (cancelled, stale, done, busy, gone). */
  discarded(reason: string): void;
  /** A task of a type with no handler here was given back to its class's waiting topic. */
  returned(jobType: string): void;
}

const BREAKER_VALUE = { closed: 0, ramping: 1, open: 2 } as const;

/**
 * Registers the worker's metrics in `registry`: handler duration by job type and outcome, tasks in
 * flight (also by resource class and slot kind: `reserved` or `shared`), breaker state per job
 * type (0 closed, 1 ramping, 2 open), lease renewal failures and zombie attempts. Classes are
 * the worker's own (bounded). Job types are the registered handlers' (bounded); an unregistered type's
 * tasks count as `_unregistered`. Labels carry `worker_id` so several workers share one registry.
 */
export function createWorkerMetrics(
  registry: Registry,
  workerId: string,
  known: (jobType: string) => boolean,
  source: WorkerMetricsSource,
): WorkerMetrics {
  const duration = new Histogram({
    name: 'kairos_worker_handler_duration_seconds',
    help: 'How long handlers ran, by job type and outcome (succeeded or the failure class)',
    labelNames: ['worker_id', 'job_type', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  new Gauge({
    name: 'kairos_worker_tasks_in_flight',
    help: 'Handlers running now',
    labelNames: ['worker_id'] as const,
    registers: [registry],
    collect() {
      this.set({ worker_id: workerId }, source.inFlight());
    },
  });
  new Gauge({
    name: 'kairos_worker_slots_in_use',
    help: 'Handler slots in use by resource class and kind (reserved for the class, or shared)',
    labelNames: ['worker_id', 'resource_class', 'slot'] as const,
    registers: [registry],
    collect() {
      for (const [rc, held] of source.slots()) {
        this.set({ worker_id: workerId, resource_class: rc, slot: 'reserved' }, held.reserved);
        this.set({ worker_id: workerId, resource_class: rc, slot: 'shared' }, held.shared);
      }
    },
  });
  new Gauge({
    name: 'kairos_worker_breaker_state',
    help: 'Circuit breaker of a job type: 0 closed, 1 ramping (slow start), 2 open',
    labelNames: ['worker_id', 'job_type'] as const,
    registers: [registry],
    collect() {
      for (const [jobType, state] of source.breakers())
        this.set({ worker_id: workerId, job_type: jobType }, BREAKER_VALUE[state]);
    },
  });
  const renewals = new Counter({
    name: 'kairos_worker_lease_renewal_failures_total',
    help: 'Lease renewals that could not reach Redis',
    labelNames: ['worker_id'] as const,
    registers: [registry],
  });
  const zombies = new Counter({
    name: 'kairos_worker_zombie_attempts_total',
    help: 'Attempts on which this worker learned it was a zombie (a newer attempt took the job)',
    labelNames: ['worker_id'] as const,
    registers: [registry],
  });
  const discards = new Counter({
    name: 'kairos_worker_tasks_discarded_total',
    help: 'Tasks not run because their claim refused them, by reason: cancelled, stale, done, busy, gone (not live when Redis lost its state)',
    labelNames: ['worker_id', 'reason'] as const,
    registers: [registry],
  });
  const returns = new Counter({
    name: 'kairos_worker_tasks_returned_total',
    help: 'Tasks of a type with no handler on this worker, given back to their class waiting topic',
    labelNames: ['worker_id', 'job_type'] as const,
    registers: [registry],
  });
  // Present from the start at 0: an absent series is not a zero to an alert rule.
  renewals.inc({ worker_id: workerId }, 0);
  zombies.inc({ worker_id: workerId }, 0);
  return {
    handled: (jobType, outcome, ms) =>
      duration.observe(
        { worker_id: workerId, job_type: known(jobType) ? jobType : '_unregistered', outcome },
        ms / 1000,
      ),
    renewalFailed: () => renewals.inc({ worker_id: workerId }),
    zombie: () => zombies.inc({ worker_id: workerId }),
    discarded: (reason) => discards.inc({ worker_id: workerId, reason }),
    // Not a registered type by definition: its name is bounded by what the routing sends here.
    returned: (jobType) => returns.inc({ worker_id: workerId, job_type: jobType }),
  };
}

/** The metrics of a worker given no registry: nothing recorded. */
export const NO_WORKER_METRICS: WorkerMetrics = {
  handled: () => undefined,
  renewalFailed: () => undefined,
  zombie: () => undefined,
  discarded: () => undefined,
  returned: () => undefined,
};
