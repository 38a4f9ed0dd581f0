import { isKairosError, traceparentOfSpan, UNSTARTED } from '@kairos/core';
import type { ClaimRef } from '@kairos/redis';
import type { TaskDispatchRecord, TaskResultRecord } from '@kairos/schemas';
import type { Admission } from './admission.js';
import { AttemptLease, type Heartbeats } from './attempt-lease.js';
import { taskContext, type Handler } from './context.js';
import { ZombieWriteSuppressed } from './errors.js';
import { describeFailure } from './failures.js';
import { endHandlerSpan, inHandlerSpan, startHandlerSpan } from './handler-span.js';
import { jobLogger } from './job-logger.js';
import type { BatchedLeases } from './lease-batches.js';
import type { WorkerLogger } from './options.js';
import type { ResultPublisher } from './results.js';
import type { TaskReturns } from './returns.js';
import type { WorkerMetrics } from './worker-metrics.js';
import type { RunOutcome, Task } from './task-pool.js';

/** How long a task whose claim failed (Redis unreachable) waits before claiming again, ms. */
const CLAIM_RETRY_MS = 500;

/** How long a task refused by the breaker or the retry budget waits before asking again, ms. */
const ADMISSION_RETRY_MS = 250;

/** How long a task whose result could not be published waits before it runs again here, ms. */
const PUBLISH_RETRY_MS = 1000;

export interface AttemptRunnerOptions {
  readonly workerId: string;
  readonly handlers: ReadonlyMap<string, Handler>;
  readonly admission: Admission;
  readonly leases: BatchedLeases;
  readonly heartbeats: Heartbeats;
  readonly results: ResultPublisher;
  /** Where a task of a type with no handler here goes back to (its class's waiting topic). */
  readonly returns: TaskReturns;
  /** Aborted when the worker stops past its shutdown timeout. */
  readonly shutdown: AbortSignal;
  readonly logger: WorkerLogger;
  /** A superseded attempt found out here (`log`: its logger, lines carry its job and trace). */
  readonly onZombie: (err: ZombieWriteSuppressed, log: WorkerLogger) => void;
  readonly metrics: WorkerMetrics;
}

type Claim = 'OK' | 'UNLEASED' | 'RETRY' | 'CANCELLED' | 'STALE' | 'DONE' | 'BUSY' | 'GONE';

/** One attempt as it runs here: its task, its log lines' context, its trace context. */
interface Run {
  readonly d: TaskDispatchRecord;
  /** Lines carry jobId, fence and traceparent. */
  readonly log: WorkerLogger;
  /** The attempt's trace context: its handler span's once started (tracing on), else the task's. */
  traceparent: string | null;
}

/**
 * Runs one attempt: admission, lease claim, the handler (its lease renewed meanwhile), the result
 * published, the lease released once the result is durable. The lease is held until then, so the
 * attempt stays fenced while its slot already runs the next task's handler.
 */
export class AttemptRunner {
  readonly #o: AttemptRunnerOptions;

  constructor(options: AttemptRunnerOptions) {
    this.#o = options;
  }

  /** Runs the attempt; `handlerDone` is called once its handler returned (the slot is free then). */
  async run(task: Task, handlerDone: () => void = () => undefined): Promise<RunOutcome> {
    const d = task.dispatch;
    const log = jobLogger(this.#o.logger, {
      jobId: d.job_id,
      fence: d.fence,
      ...(task.traceparent !== null && { traceparent: task.traceparent }),
    });
    const run: Run = { d, log, traceparent: task.traceparent };
    const handler = this.#o.handlers.get(d.job_type);
    if (!handler) return this.#giveBack(task, log);
    if (!this.#o.admission.admit(d.job_type, d.attempt)) {
      // The breaker is open (or slowly starting) or the retry budget is spent: not now. The task
      // waits here and asks again; it is not run, so it uses none of the job's attempts.
      return { againInMs: ADMISSION_RETRY_MS };
    }
    const ref = { jobId: d.job_id, shard: d.shard, fence: d.fence, version: d.version, epoch: d.epoch };
    const claim = await this.#claim(ref, log);
    if (claim === 'RETRY') return { againInMs: CLAIM_RETRY_MS };
    if (claim === 'GONE') return this.#unstarted(run);
    if (claim !== 'OK' && claim !== 'UNLEASED') {
      // Cancelled or rescheduled since dispatch, superseded by a newer attempt, already done,
      // running on another worker, or not live when Redis lost its state: nothing to run here.
      log.info({ claim }, 'task discarded');
      this.#o.metrics.discarded(claim.toLowerCase());
      return { end: 'done' };
    }
    const attempt = new AbortController();
    const lease = new AttemptLease(ref, claim === 'OK', {
      leases: this.#o.leases,
      heartbeats: this.#o.heartbeats,
      onStop: (reason) => {
        attempt.abort(reason);
        if (reason instanceof ZombieWriteSuppressed) this.#o.onZombie(reason, log);
      },
      onError: (err) => {
        this.#o.metrics.renewalFailed();
        log.warn({ err }, 'lease renewal failed');
      },
    });
    lease.start();
    const startedAt = Date.now();
    this.#reportStart(run, startedAt);
    const error = await this.#execute(run, handler, lease, attempt);
    handlerDone();
    if (this.#o.shutdown.aborted && error !== null && !lease.stopped) {
      // Aborted by shutdown: no verdict on the job. The lease is released and the task delivered
      // again to the next worker.
      await lease.release(false).catch(() => undefined);
      return { end: 'abandoned' };
    }
    return this.#finish(run, lease, error, startedAt);
  }

  async #claim(ref: ClaimRef, log: WorkerLogger): Promise<Claim> {
    try {
      const claim = await this.#o.leases.claim(ref);
      return claim === 'WAIT' ? await this.#unrestored(log) : claim;
    } catch (err) {
      if (isKairosError(err, 'REDIS_OOM')) {
        // Redis is out of memory: the delay tier runs those partitions from PostgreSQL, and the
        // job must not wait for memory. It runs without a lease (no reaping, no zombie check);
        // the tracker still fences its result by the job's current fence.
        log.warn({}, 'Redis out of memory: running the attempt without a lease');
        return 'UNLEASED';
      }
      // No lease, no run yet: Redis is unreachable (a restart, a failover). The task waits here
      // and claims again shortly.
      log.warn({ err }, 'could not claim the attempt yet; retrying');
      return 'RETRY';
    }
  }

  /**
   * Redis lost the partition's state and its owner has not restored it yet: the claim waits, so
   * no attempt that finished before the loss runs again. Unless Redis is full: the owner cannot
   * write it back then and runs the partition from PostgreSQL, so the attempt runs unleased, as
   * under any refused claim (see #claim).
   */
  async #unrestored(log: WorkerLogger): Promise<Claim> {
    if (await this.#o.leases.full().catch(() => false)) {
      log.warn(
        {},
        'Redis out of memory and its partition state not restored: running the attempt without a lease',
      );
      return 'UNLEASED';
    }
    log.info({}, 'the partition state is being restored after Redis lost it; claiming again shortly');
    return 'RETRY';
  }

  /** Runs the handler (in its span when tracing is on); returns the failure it ended with, or null. */
  async #execute(
    run: Run,
    handler: Handler,
    lease: AttemptLease,
    attempt: AbortController,
  ): Promise<TaskResultRecord['error']> {
    const d = run.d;
    const shutdown = this.#o.shutdown;
    const onShutdown = () => attempt.abort(shutdown.reason);
    shutdown.addEventListener('abort', onShutdown, { once: true });
    let error: TaskResultRecord['error'] = null;
    const span = startHandlerSpan(d, run.traceparent);
    if (span) run.traceparent = traceparentOfSpan(span);
    const started = performance.now();
    try {
      const ctx = taskContext(d, attempt.signal, () => lease.renew(), run);
      await inHandlerSpan(span, () => handler(JSON.parse(d.payload) as unknown, ctx));
    } catch (err) {
      error = describeFailure(err);
    } finally {
      shutdown.removeEventListener('abort', onShutdown);
    }
    endHandlerSpan(span, error);
    if (error !== null) {
      run.log.warn(
        {
          attempt: d.attempt,
          errorClass: error.error_class,
          failureClass: error.failure_class,
          error: error.message,
        },
        'handler failed',
      );
    }
    this.#o.metrics.handled(d.job_type, error?.failure_class ?? 'succeeded', performance.now() - started);
    if (!lease.stopped && !shutdown.aborted) {
      this.#o.admission.record(
        d.job_type,
        error !== null && (error.failure_class === 'transient' || error.failure_class === 'throttled'),
      );
    }
    return error;
  }

  /**
   * No handler for the task's type here: it is given back, unclaimed, to its class's waiting topic
   * for a service that handles it (see TaskReturns); never failed for it. Counted.
   */
  async #giveBack(task: Task, log: WorkerLogger): Promise<RunOutcome> {
    try {
      await this.#o.returns.giveBack(task);
    } catch (err) {
      log.warn({ err }, 'could not give back a task of a type with no handler here; trying again');
      return { againInMs: PUBLISH_RETRY_MS };
    }
    this.#o.metrics.returned(task.dispatch.job_type);
    log.info({ type: task.dispatch.job_type, returns: task.returns + 1 }, 'no handler here: task given back');
    return { end: 'done' };
  }

  /**
   * The claim was refused by a Redis that lost the attempt (GONE): it is not run here, and the
   * tracker is told it never started. PostgreSQL decides: a job still QUEUED at this fence is
   * dispatched again at once (same attempt); a finished, cancelled or superseded one is left as it
   * is. So no finished job runs again and no waiting job is lost, whatever Redis lost.
   */
  async #unstarted(run: Run): Promise<RunOutcome> {
    this.#o.metrics.discarded('gone');
    const now = Date.now();
    const error = {
      error_class: 'AttemptUnknownToRedis',
      message:
        'not started: Redis had lost this attempt when a worker claimed it; PostgreSQL decides whether it runs',
      failure_class: UNSTARTED,
      retry_after_ms: null,
    };
    try {
      await this.#o.results.publish(this.#record(run.d, 'FAILED', error, now, now), run.traceparent);
    } catch (err) {
      run.log.warn({ err }, 'could not report an attempt Redis had lost; trying again');
      return { againInMs: PUBLISH_RETRY_MS };
    }
    run.log.info({ claim: 'GONE' }, 'task not run: Redis had lost its attempt; reported to the tracker');
    return { end: 'done' };
  }

  /**
   * Tells the tracker the attempt runs here (the job becomes RUNNING), without holding up the
   * handler: the report is informational, the result that follows is what counts. Both go through
   * one producer keyed by job id, so the start never lands after its result.
   */
  #reportStart(run: Run, startedAt: number): void {
    this.#o.results
      .publish(this.#record(run.d, 'STARTED', null, startedAt, startedAt), run.traceparent)
      .catch((err: unknown) => run.log.warn({ err }, 'start report not published'));
  }

  #record(
    d: TaskDispatchRecord,
    outcome: TaskResultRecord['outcome'],
    error: TaskResultRecord['error'],
    startedAt: number,
    finishedAt: number,
  ): TaskResultRecord {
    return {
      job_id: d.job_id,
      tenant_id: d.tenant_id,
      attempt: d.attempt,
      fence: d.fence,
      epoch: d.epoch,
      shard: d.shard,
      outcome,
      error,
      worker_id: this.#o.workerId,
      due_at: d.due_at,
      started_at: startedAt,
      finished_at: finishedAt,
      resource_class: d.resource_class,
      dispatched_at: d.dispatched_at,
    };
  }

  /** Publishes the result, then releases the lease; the task ends once its result is durable. */
  async #finish(
    run: Run,
    lease: AttemptLease,
    error: TaskResultRecord['error'],
    startedAt: number,
  ): Promise<RunOutcome> {
    const result = this.#record(run.d, error ? 'FAILED' : 'SUCCEEDED', error, startedAt, Date.now());
    try {
      // Published even by a zombie: the tracker suppresses it (stale fence) and counts it.
      await this.#o.results.publish(result, run.traceparent);
    } catch (err) {
      // Not durable: the lease is given up and the attempt runs again here shortly (or on the
      // partition's next owner): at least once.
      run.log.error({ err }, 'result not published; the task will run again');
      await lease.release(false).catch(() => undefined);
      return { againInMs: PUBLISH_RETRY_MS };
    }
    await lease.release(true).catch((err: unknown) => run.log.warn({ err }, 'lease release failed'));
    return { end: 'done' };
  }
}
