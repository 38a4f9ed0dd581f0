import { dlqOutboxRow, jobEventOutboxRow } from '@kairos/commands';
import {
  applyIsolatingFaults,
  CANARY_TENANT,
  classifyError,
  decideRetry,
  GroupCommit,
  isFailureClass,
  UNSTARTED,
  Lifecycle,
  LifecycleService,
  retryOnSerialization,
  serviceGroup,
  type FailureClass,
  type Job,
} from '@kairos/core';
import {
  failedAttempts,
  failJobs,
  inTransaction,
  lockJobs,
  recordResults,
  recordStarts,
  retryJobs,
  writeOutbox,
  type AttemptError,
  type CurrentFailure,
  type FailRecord,
  type OutboxRow,
  type Pool,
  type PoolClient,
  type Refusals,
  type ResultRecord,
  type RetryRecord,
  type StartRecord,
} from '@kairos/db';
import {
  DeadRecords,
  groupMemberConfig,
  headerString,
  HEADERS,
  RecordDecoder,
  type AvroCodec,
  type DeadRecordVerdict,
  type TopicNames,
} from '@kairos/kafka';
import { createTrackerMetrics, silentLogger, type Logger, type TrackerMetrics } from '@kairos/observability';
import { SCHEMAS, type TaskResultRecord } from '@kairos/schemas';
import type { Consumer, Kafka, KafkaMessage } from 'kafkajs';
import type { Canary, CanaryOptions } from './canary.js';
import type { JobGaugesOptions } from './job-gauges.js';
import type { OutboxHeartbeat, OutboxHeartbeatOptions } from './outbox-heartbeat.js';
import { observeHops } from './result-hops.js';
import { decodeResults, reportsOf, type AcceptedResult } from './result-records.js';
import { endRecordSpans, startRecordSpans, type TracedOutcome } from './result-spans.js';
import type { ScheduleGenerator, ScheduleGeneratorOptions } from './schedule-generator.js';
import type { ScheduleSla, ScheduleSlaOptions } from './schedule-sla.js';
import { trackerParts } from './tracker-parts.js';
import type { Watchdog, WatchdogOptions } from './watchdog.js';

export interface TrackerOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly pool: Pool;
  readonly topics: TopicNames;
  /** Resource classes whose task topics are tracked. */
  readonly resourceClasses: readonly string[];
  /** Consumer group. Default: `kairos-tracker`. */
  readonly groupId?: string;
  /** Kafka session timeout, ms: how soon a dead tracker's partitions move on. Default: 6,000. */
  readonly sessionTimeoutMs?: number;
  readonly log?: Logger;
  /** Called when the Kafka consumer crashed for good (the app should exit and be restarted). */
  readonly onFatal?: (err: Error) => void;
  /** Called after each batch is durable (tests and metrics). */
  readonly onApplied?: (starts: number, results: number) => void;
  /** Prometheus metrics (kairos_zombie_writes_suppressed_total, ...). Default: a new registry. */
  readonly metrics?: TrackerMetrics;
  /** Clock of retry due times and dead-letter times. Default: the system clock. */
  readonly now?: () => Date;
  /** Source of backoff jitter, in [0, 1). Default: Math.random. */
  readonly random?: () => number;
  /**
   * The generator of recurring schedules' occurrences, run by this tracker (false: none).
   * Default: on, with its defaults (every second, 2 minutes ahead).
   */
  readonly generator?:
    false | Omit<ScheduleGeneratorOptions, 'pool' | 'codec' | 'jobEventsTopic' | 'metrics'>;
  /**
   * The canary, run by this tracker: a job per class through the whole pipeline every interval,
   * alerting when a class's stop completing (see Canary). Default: none.
   */
  readonly canary?: Omit<CanaryOptions, 'pool' | 'resourceClasses' | 'metrics' | 'log'>;
  /** The reconciliation watchdog, run by this tracker (see Watchdog). Default: none. */
  readonly watchdog?: Omit<WatchdogOptions, 'pool' | 'codec' | 'topics' | 'metrics' | 'log'>;
  /**
   * Follow the outbox connector's heartbeats (kairos.heartbeat) for the outbox publication lag
   * (kairos_outbox_lag_seconds, and the watchdog's outbox_stalled). Default: none.
   */
  readonly outboxHeartbeat?: Pick<OutboxHeartbeatOptions, 'retryMs'>;
  /** The gauges of jobs by state, dead letters, oldest overdue, forecast, consumer lag. Default: none. */
  readonly gauges?: Omit<JobGaugesOptions, 'pool' | 'resourceClasses' | 'metrics' | 'log'>;
  /**
   * The SLA check of schedules with sla_ms, run by this tracker (false: none). Default: on, with
   * its defaults (sleeps until the next deadline, between 1 s and 10 s).
   */
  readonly scheduleSla?: false | Omit<ScheduleSlaOptions, 'pool' | 'metrics' | 'alertActive' | 'log'>;
}

/** A batch transaction that lost a race (a row moved between partitions, a deadlock) is redone up to this often. */
const MAX_TRANSACTION_TRIES = 5;

/** One Kafka batch's reports. */
interface Reports {
  readonly starts: readonly StartRecord[];
  readonly results: readonly ResultRecord[];
}

/**
 * The batches of the results topic's partitions, consumed in parallel, share a transaction when
 * they arrive together (group commit): a batch waits at most 2 ms, and not at all when no
 * transaction is being written. Each is still acknowledged only once its transaction committed.
 */
const BATCH_GROUP = { maxWaitMs: 2, maxSize: 16 } as const;

/**
 * Tracks what happened to every job: attempt starts and results (from kairos.task-results) are
 * applied to PostgreSQL, fenced, the Kafka batches of partitions that arrive together in one
 * transaction, and offsets are committed only after that transaction commits.
 *
 * A failed current attempt is decided in that transaction by the job's retry policy and the
 * failure's class: a retry makes the job SCHEDULED again (attempt, fence and version one higher,
 * due after the backoff or the reported Retry-After) with its SCHEDULED event in the outbox, so the
 * delay tier dispatches it like any job, durably; otherwise the job becomes FAILED and its dead
 * letter, with the error of every attempt, goes through the outbox to kairos.dlq.<class>.
 */
export class Tracker extends LifecycleService {
  readonly #o: TrackerOptions;
  readonly #log: Logger;
  readonly #consumer: Consumer;
  readonly metrics: TrackerMetrics;
  /** Generates recurring schedules' occurrences (undefined when turned off). */
  readonly generator: ScheduleGenerator | undefined;
  /** The canary (undefined when not configured). */
  readonly canary: Canary | undefined;
  /** The reconciliation watchdog (undefined when not configured). */
  readonly watchdog: Watchdog | undefined;
  /** The SLA check of schedules (undefined when turned off). */
  readonly scheduleSla: ScheduleSla | undefined;
  /** The outbox heartbeat follower (undefined when not configured). */
  readonly #heartbeat: OutboxHeartbeat | undefined;
  /** The results consumer, then the generator (stopped first). */
  readonly #life: Lifecycle;
  readonly #group: GroupCommit<Reports, true>;
  /** Reads kairos.task-results as TaskResult records of the current schema (older ones resolved). */
  readonly #decoder: RecordDecoder<TaskResultRecord>;
  /** Where a result that can never be applied goes, with its reason. */
  readonly #dead: DeadRecords;

  constructor(options: TrackerOptions) {
    super('tracker');
    this.#o = options;
    this.#log = options.log ?? silentLogger();
    this.metrics = options.metrics ?? createTrackerMetrics();
    this.#consumer = options.kafka.consumer(
      groupMemberConfig({
        groupId: options.groupId ?? 'kairos-tracker',
        ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
      }),
    );
    const groupId = options.groupId ?? 'kairos-tracker';
    this.#decoder = new RecordDecoder(options.codec.registry, options.topics.taskResults, SCHEMAS.taskResult);
    this.#dead = new DeadRecords({
      kafka: options.kafka,
      codec: options.codec,
      topic: options.topics.deadRecords,
      consumer: groupId,
      log: this.#log,
      onSetAside: (topic, reason) => this.metrics.deadRecords.inc({ topic, reason }),
    });
    const consumer = new Lifecycle('tracker consumer', {
      start: () => this.#startConsumer(),
      stop: async () => {
        await this.#consumer.disconnect();
        await this.#dead.stop();
      },
    });
    const parts = trackerParts(options, this.metrics, this.#log);
    this.generator = parts.generator;
    this.canary = parts.canary;
    this.watchdog = parts.watchdog;
    this.scheduleSla = parts.scheduleSla;
    this.#heartbeat = parts.heartbeat;
    this.#life = serviceGroup(
      'tracker',
      [
        consumer,
        parts.generator,
        parts.canary,
        parts.heartbeat,
        parts.watchdog,
        parts.gauges,
        parts.scheduleSla,
      ].filter((p) => p !== undefined),
    );
    this.#group = new GroupCommit<Reports, true>(
      {
        write: async (batches) => {
          await this.#apply(
            batches.flatMap((b) => b.starts),
            batches.flatMap((b) => b.results),
          );
          return batches.map(() => true);
        },
        // PostgreSQL down fails every batch alike; anything else may be one batch's doing.
        sharedFailure: (err) => classifyError(err).class === 'transient',
      },
      BATCH_GROUP,
      'tracker batch group',
    );
  }

  protected onStart(): Promise<void> {
    return this.#life.start();
  }

  protected onStop(): Promise<void> {
    // The heartbeat follower's stop waits out a fetch in flight, and no part needs it running (the
    // watchdog only reads its lag): it stops alongside the rest, not before them. The group
    // still reports its failure.
    this.#heartbeat?.stop().catch(() => undefined);
    return this.#life.stop();
  }

  async #startConsumer(): Promise<void> {
    const resultsTopic = this.#o.topics.taskResults;
    this.#consumer.on(this.#consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      this.#log.fatal({ err: e.payload.error }, 'consumer crashed and will not restart');
      this.#o.onFatal?.(e.payload.error);
    });
    await this.#consumer.connect();
    // Dispatches are recorded by the delay tier's claim (state and attempt row); only what the
    // workers report comes through here.
    await this.#consumer.subscribe({ topics: [resultsTopic], fromBeginning: true });
    await this.#consumer.run({
      // Batches of different partitions touch different jobs: taken in parallel, written together.
      partitionsConsumedConcurrently: 4,
      eachBatch: async ({ batch, heartbeat }) => {
        const source = (message: KafkaMessage) => ({
          topic: batch.topic,
          partition: batch.partition,
          message,
        });
        const { accepted, refused } = await decodeResults(this.#decoder, batch.messages);
        for (const r of refused) await this.#dead.setAside(source(r.message), r.verdict);
        const spans = startRecordSpans(tracedOutcomes(accepted));
        try {
          // One record PostgreSQL refuses as data is set aside; the batch's others are applied.
          await applyIsolatingFaults(
            accepted,
            (some) => this.#group.add(reportsOf(some)).then(() => undefined),
            (err) => classifyError(err).class === 'invalid',
            (r, err) => this.#dead.setAside(source(r.message), unapplicable(err)),
          );
        } catch (err) {
          endRecordSpans(spans, err);
          throw err;
        }
        endRecordSpans(spans);
        const decoded = accepted.map((r) => r.record);
        observeHops(this.metrics.hops, decoded, Date.now());
        const applied = reportsOf(accepted);
        this.#log.debug({ starts: applied.starts.length, results: applied.results.length }, 'applied');
        this.#o.onApplied?.(applied.starts.length, applied.results.length);
        await heartbeat();
      },
    });
  }

  /** Reports in one transaction, redone from the start if it lost a race PostgreSQL reports as retriable. */
  async #apply(starts: readonly StartRecord[], results: readonly ResultRecord[]): Promise<void> {
    const applied = await retryOnSerialization(
      () =>
        inTransaction(this.#o.pool, async (tx) => {
          await lockJobs(tx, [...starts.map((d) => d.jobId), ...results.map((r) => r.jobId)]);
          const started = await recordStarts(tx, starts);
          const { failed, succeeded, suppressed, refused } = await recordResults(tx, results);
          const refusals = { start: started.refused, result: refused };
          return { ...(await this.#settle(tx, failed)), succeeded, suppressed, refusals };
        }),
      {
        tries: MAX_TRANSACTION_TRIES,
        onRetry: (err, tries) => this.#log.debug({ err, tries }, 'batch transaction lost a race; redoing it'),
      },
    );
    // Counted once committed (a redone transaction would count twice).
    const m = this.metrics;
    if (applied.suppressed > 0) {
      m.zombieWritesSuppressed.inc(applied.suppressed);
      this.#log.warn({ suppressed: applied.suppressed }, 'results of superseded attempts suppressed');
    }
    this.#countRefused(applied.refusals);
    if (applied.succeeded > 0) m.results.inc({ outcome: 'SUCCEEDED' }, applied.succeeded);
    if (applied.retried > 0) m.retriesScheduled.inc(applied.retried);
    for (const job of applied.dead)
      if (job.tenantId !== CANARY_TENANT) m.deadLettered.inc({ resource_class: job.resourceClass });
  }

  /** Refused reports (audited in refused_reports): a steady stream means forged or replayed reports. */
  #countRefused(refusals: Record<'start' | 'result', Refusals>): void {
    let any = false;
    for (const [kind, byReason] of Object.entries(refusals))
      for (const [reason, n] of Object.entries(byReason)) {
        this.metrics.refusedReports.inc({ kind, reason }, n);
        any = true;
      }
    if (any)
      this.#log.warn(
        { refused: refusals },
        'reports refused: no current attempt of a live job (audited in refused_reports)',
      );
  }

  /** Retries or fails each job whose current attempt failed, inside the batch's transaction. */
  async #settle(
    tx: PoolClient,
    failures: readonly CurrentFailure[],
  ): Promise<{ retried: number; dead: readonly Job[] }> {
    if (failures.length === 0) return { retried: 0, dead: [] };
    const now = this.#o.now?.() ?? new Date();
    const random = this.#o.random ?? Math.random;
    const retries: RetryRecord[] = [];
    const fails: (FailRecord & { reason: 'permanent' | 'exhausted'; failureClass: FailureClass })[] = [];
    for (const { job, result } of failures) {
      if (result.failureClass === UNSTARTED) {
        // Its claim was refused by a Redis that lost the attempt: PostgreSQL says (the failure is
        // of the job's current fence, the job live) that it never ran. Again at once, same attempt.
        retries.push({ ...unstartedRetry(job, now), lastError: job.lastError });
        continue;
      }
      const failureClass = isFailureClass(result.failureClass) ? result.failureClass : 'ambiguous';
      const decision = decideRetry(
        { maxAttempts: job.maxAttempts, ...job.retry },
        job.attempt,
        {
          class: failureClass,
          ...(result.retryAfterMs === null ? {} : { retryAfterMs: result.retryAfterMs }),
        },
        random,
      );
      const lastError = result.errorMessage;
      if (decision.retry) {
        retries.push({
          jobId: job.id,
          fence: job.fence,
          dueAt: new Date(now.getTime() + decision.delayMs),
          lastError,
          failureClass,
        });
      } else {
        fails.push({
          jobId: job.id,
          fence: job.fence,
          startedAt: result.startedAt,
          finishedAt: result.finishedAt,
          lastError,
          reason: decision.reason,
          failureClass,
        });
      }
    }
    const outbox: OutboxRow[] = [];
    const retried = await retryJobs(tx, retries);
    for (const job of retried) {
      outbox.push(
        await jobEventOutboxRow(this.#o.codec, this.#o.topics.jobEvents, 'SCHEDULED', job, now, null),
      );
      this.#log.info(
        {
          jobId: job.id,
          attempt: job.attempt,
          dueAt: job.dueAt.toISOString(),
          error: job.lastError,
          traceparent: job.traceparent ?? undefined,
        },
        'attempt failed; retry scheduled',
      );
    }
    const failed = await failJobs(tx, fails);
    const history = await failedAttempts(
      tx,
      failed.map((j) => j.id),
    );
    const how = new Map(fails.map((f) => [f.jobId, f]));
    for (const job of failed) {
      const f = how.get(job.id);
      if (!f) continue;
      // A failed canary (a worker of an SDK that predates them answers NO_HANDLER) is Kairos's own
      // probe: it never reaches users' dead-letter topics.
      if (job.tenantId === CANARY_TENANT) continue;
      outbox.push(await this.#deadLetter(job, f.reason, f.failureClass, history.get(job.id) ?? [], now));
      this.#log.warn(
        {
          jobId: job.id,
          attempts: job.attempt,
          reason: f.reason,
          failureClass: f.failureClass,
          error: job.lastError,
          traceparent: job.traceparent ?? undefined,
        },
        'job failed; dead-lettered',
      );
    }
    await writeOutbox(tx, outbox);
    return { retried: retried.length, dead: failed };
  }

  async #deadLetter(
    job: Job,
    reason: 'permanent' | 'exhausted',
    failureClass: FailureClass,
    history: readonly AttemptError[],
    now: Date,
  ): Promise<OutboxRow> {
    const topic = this.#o.topics.dlq(job.resourceClass);
    return dlqOutboxRow(
      this.#o.codec,
      topic,
      {
        job_id: job.id,
        tenant_id: job.tenantId,
        job_type: job.type,
        resource_class: job.resourceClass,
        payload: job.payload,
        due_at: job.dueAt.getTime(),
        attempts: job.attempt,
        max_attempts: job.maxAttempts,
        failure_class: failureClass,
        reason,
        error_history: history.map((a) => {
          const finishedAt = a.finishedAt ?? a.startedAt ?? now;
          return {
            attempt: a.attempt,
            fence: a.fence,
            worker_id: a.workerId ?? '',
            error_class: a.errorClass ?? '',
            failure_class: a.failureClass ?? 'ambiguous',
            message: a.message ?? '',
            started_at: (a.startedAt ?? finishedAt).getTime(),
            finished_at: finishedAt.getTime(),
          };
        }),
        failed_at: now.getTime(),
      },
      job.traceparent ?? null,
    );
  }
}

/** The outcomes among accepted results, with the trace context each arrived in. */
function tracedOutcomes(accepted: readonly AcceptedResult[]): TracedOutcome[] {
  return accepted
    .filter((r) => r.record.outcome !== 'STARTED')
    .map((r) => ({ result: r.record, traceparent: headerString(r.message.headers, HEADERS.traceparent) }));
}

/** The verdict on a record PostgreSQL refused as data (an error of class invalid). */
function unapplicable(err: unknown): DeadRecordVerdict {
  return { reason: 'UNAPPLICABLE', message: `PostgreSQL refused the record: ${String(err)}` };
}

/** The retry of an attempt that never started: due now, the same attempt number. */
function unstartedRetry(job: Job, now: Date): Omit<RetryRecord, 'lastError'> {
  return { jobId: job.id, fence: job.fence, dueAt: now, failureClass: UNSTARTED, keepAttempt: true };
}
