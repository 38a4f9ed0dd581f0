import {
  classifyError,
  endHopSpan,
  GroupCommit,
  HOP_SPANS,
  KairosError,
  parseCreateJob,
  parseReschedule,
  shardOf,
  startHopSpan,
  traceparentOfSpan,
  traceparentOrNew,
  type FieldError,
  type GroupCommitOptions,
  type GroupCommitStats,
  type HopSpan,
  type Job,
  type JobLimits,
  type JobSpec,
} from '@kairos/core';
import {
  cancelUnfinishedJob,
  claimRequestKey,
  findRequestKey,
  findJob,
  inTransaction,
  insertJobs,
  setReplayOf,
  rescheduleScheduledJob,
  writeOutbox,
  type LedgerEntry,
  type NewJobRow,
  type OutboxRow,
  type Pool,
  type PoolClient,
} from '@kairos/db';
import { isUuid, newId } from './ids.js';
import { jobEventOutboxRow } from './events.js';
import type { HandlerOptions } from './handler-options.js';
import { firstOfEachKey, writeCreates, type CreateResult } from './job-creates.js';
import { keyUsedElsewhere, requestKeyOf, type RequestKey } from './request-keys.js';

export interface JobCommandsOptions extends HandlerOptions {
  /** Group commit of single creates (createJob). Default: DEFAULT_GROUP_COMMIT (2 ms, 100). */
  readonly createGroup?: GroupCommitOptions;
}

/** A validated single create and its serialized event, waiting for its group. */
interface PreparedCreate {
  readonly row: NewJobRow;
  readonly event: OutboxRow;
}

export interface CreateContext {
  /** Field path prefix for errors (`jobs` for a batch: `jobs.3.due_at`). */
  readonly pathPrefix?: string;
  /**
   * W3C trace context of the request. A job created with a valid one keeps it (as the parent of
   * its create span when tracing is on); one created without gets a new trace. Malformed: as none.
   */
  readonly traceparent?: string | null;
}

/** How a cancel or reschedule is scoped and deduplicated (the Kafka ingress uses both). */
export interface CommandContext extends CreateContext {
  /** Only this tenant's jobs: another tenant's job is NOT_FOUND, as if it did not exist. */
  readonly tenantId?: string;
  /**
   * Applies the command at most once per (tenantId, requestKey): a repeat changes nothing and
   * answers with the job as it is now, `applied: false`. Needs tenantId.
   */
  readonly requestKey?: string;
}

export interface CommandResult {
  /** The job after the command (for a repeated request key: as it is now). */
  readonly job: Job;
  /** False when the request key had already been applied: nothing changed. */
  readonly applied: boolean;
}

/**
 * The command handlers every ingress shares. Each command validates everything first and changes
 * nothing on any error; then writes the job rows and their outbox events in one transaction.
 */
export class JobCommands {
  readonly #o: JobCommandsOptions;
  readonly #group: GroupCommit<PreparedCreate, CreateResult>;

  constructor(options: JobCommandsOptions) {
    this.#o = options;
    this.#group = new GroupCommit(
      {
        write: (items) =>
          writeCreates(
            options.pool,
            items.map((c) => c.row),
            new Map(items.map((c) => [c.row.id, c.event])),
          ),
        // A dependency down fails every member alike; anything else may be one member's doing.
        sharedFailure: (err) => classifyError(err).class === 'transient',
      },
      options.createGroup,
      'createGroup',
    );
  }

  get limits(): JobLimits {
    return this.#o.limits;
  }

  /** Validates a list of create requests; throws one VALIDATION error naming every bad field. */
  validate(requests: readonly unknown[], ctx: CreateContext = {}): JobSpec[] {
    const now = this.#now();
    const errors: FieldError[] = [];
    const specs: JobSpec[] = [];
    requests.forEach((req, i) => {
      const prefix = ctx.pathPrefix === undefined ? '' : `${ctx.pathPrefix}.${i}`;
      const parsed = parseCreateJob(req, now, this.#o.limits, prefix);
      if (parsed.ok) specs.push(parsed.value);
      else errors.push(...parsed.errors);
    });
    if (errors.length > 0) {
      throw new KairosError('VALIDATION', `${errors.length} invalid field(s)`, { fields: errors });
    }
    return specs;
  }

  /**
   * Creates one job. Validated first (a VALIDATION error never reaches the database); then written
   * in a transaction shared with concurrent creates (group commit, see GroupCommitOptions), yet
   * answered on its own: its job, `created: false` for a key that already had one (also when the
   * key's first create is in the same group), or its own error.
   */
  async createJob(request: unknown, ctx: CreateContext = {}): Promise<CreateResult> {
    const [spec] = this.validate([request], ctx);
    if (!spec) throw new Error('validation answered nothing for one request');
    const { row, span } = this.#tracedRow(spec, ctx.traceparent);
    try {
      const event = await this.#event(row, this.#now());
      const result = await this.#group.add({ row, event });
      endHopSpan(span);
      return result;
    } catch (err) {
      endHopSpan(span, err);
      throw err;
    }
  }

  /** Transactions and creates of createJob so far (how well they were grouped). */
  get createGroupStats(): GroupCommitStats {
    return this.#group.stats;
  }

  /**
   * Creates jobs (one or a batch) atomically in a transaction of their own; idempotency keys
   * return the original job (within the batch, the first request of a key wins).
   */
  async createJobs(requests: readonly unknown[], ctx: CreateContext = {}): Promise<CreateResult[]> {
    if (requests.length === 0) return [];
    if (requests.length > this.#o.limits.maxBatch) {
      throw new KairosError('VALIDATION', `at most ${this.#o.limits.maxBatch} jobs per batch`, {
        fields: [{ field: ctx.pathPrefix ?? '(body)', message: `at most ${this.#o.limits.maxBatch} jobs` }],
      });
    }
    return this.#write(this.validate(requests, ctx), ctx.traceparent);
  }

  /**
   * Creates jobs Kairos makes itself (canaries) from specs already built: no request validation,
   * since their tenant is one no request may name. Idempotency keys dedupe as for any job.
   */
  async createSystemJobs(specs: readonly JobSpec[]): Promise<CreateResult[]> {
    return specs.length === 0 ? [] : this.#write(specs, null);
  }

  async #write(specs: readonly JobSpec[], traceparent: string | null | undefined): Promise<CreateResult[]> {
    const traced = specs.map((s) => this.#tracedRow(s, traceparent));
    const rows = traced.map((t) => t.row);
    const now = this.#now();
    try {
      // Events are serialized before the transaction opens: no network I/O while it holds locks.
      const events = await Promise.all(firstOfEachKey(rows).map((r) => this.#event(r, now)));
      const results = await writeCreates(this.#o.pool, rows, new Map(events.map((e) => [e.jobId, e])));
      for (const t of traced) endHopSpan(t.span);
      return results;
    } catch (err) {
      for (const t of traced) endHopSpan(t.span, err);
      throw err;
    }
  }

  /**
   * A new job's row with its trace context: that of its create span when tracing is on (a child
   * of the request's), else the request's if valid, else a new trace.
   */
  #tracedRow(spec: JobSpec, traceparent: string | null | undefined): { row: NewJobRow; span?: HopSpan } {
    const span = startHopSpan(HOP_SPANS.create, traceparent, {
      attributes: {
        'kairos.tenant': spec.tenantId,
        'kairos.job.type': spec.type,
        'kairos.resource_class': spec.resourceClass,
      },
    });
    if (!span) return { row: this.#row(spec, traceparentOrNew(traceparent)) };
    const row = this.#row(spec, traceparentOfSpan(span));
    span.setAttribute('kairos.job.id', row.id);
    return { row, span };
  }

  /**
   * New jobs copying finished ones (a replay of dead letters, a re-run), inside the caller's
   * transaction: same tenant, type, class, payload and retry policy, a fresh id and attempt
   * budget, due now, no deadline and no idempotency key, `replay_of` the original; each with its
   * SCHEDULED event, so it takes the normal path.
   */
  async copyJobs(tx: PoolClient, originals: readonly Job[]): Promise<Job[]> {
    if (originals.length === 0) return [];
    const now = this.#now();
    const rows = originals.map((o) =>
      this.#row({
        tenantId: o.tenantId,
        idempotencyKey: null,
        type: o.type,
        resourceClass: o.resourceClass,
        payload: o.payload,
        dueAt: now,
        deadlineAt: null,
        maxAttempts: o.maxAttempts,
        retry: o.retry,
      }),
    );
    const events = await Promise.all(rows.map((r) => this.#event(r, now)));
    const jobs = await insertJobs(tx, rows);
    await writeOutbox(tx, events);
    const of = new Map(rows.map((r, i) => [r.id, originals[i]!.id]));
    await setReplayOf(
      tx,
      [...of].map(([id, o]) => ({ id, of: o })),
    );
    return jobs.map((j) => ({ ...j, replayOf: of.get(j.id) ?? null }));
  }

  #event(row: NewJobRow, now: Date): Promise<OutboxRow> {
    return jobEventOutboxRow(
      this.#o.codec,
      this.#o.jobEventsTopic,
      'SCHEDULED',
      { ...row, version: 1, fence: 1, attempt: 1 },
      now,
      null,
    );
  }

  /** A job; with `tenantId`, another tenant's job is NOT_FOUND, as if it did not exist. */
  async getJob(id: string, ctx: Pick<CommandContext, 'tenantId'> = {}): Promise<Job> {
    assertUuid(id);
    const job = await findJob(this.#o.pool, id);
    if (!job || (ctx.tenantId !== undefined && job.tenantId !== ctx.tenantId)) {
      throw new KairosError('NOT_FOUND', `no job ${id}`);
    }
    return job;
  }

  /**
   * Cancels a job that has not finished. A SCHEDULED one is simply dropped; a QUEUED one is
   * discarded by the worker's check before it runs; a RUNNING one has its handler's signal aborted
   * within a heartbeat. A finished job is a CONFLICT naming its state.
   */
  async cancelJob(id: string, ctx: CommandContext = {}): Promise<Job> {
    return (await this.cancel(id, ctx)).job;
  }

  /** cancelJob, telling a repeated request key (nothing changed) from an applied cancel. */
  async cancel(id: string, ctx: CommandContext = {}): Promise<CommandResult> {
    assertUuid(id);
    const key = requestKeyOf(ctx);
    return inTransaction(this.#o.pool, async (tx) => {
      const repeat = await this.#repeatInTx(tx, key, 'CancelJob', id);
      if (repeat) return repeat;
      await this.#assertTenant(tx, id, ctx.tenantId);
      const cancelled = await cancelUnfinishedJob(tx, id);
      if (!cancelled) {
        const job = await findJob(tx, id);
        if (!job) throw new KairosError('NOT_FOUND', `no job ${id}`);
        throw new KairosError(
          'CONFLICT',
          `job ${id} is ${job.state}; only an unfinished job (SCHEDULED, QUEUED or RUNNING) can be cancelled`,
        );
      }
      await writeOutbox(tx, [
        await jobEventOutboxRow(
          this.#o.codec,
          this.#o.jobEventsTopic,
          'CANCELLED',
          cancelled,
          this.#now(),
          ctx.traceparent ?? null,
        ),
      ]);
      return { job: cancelled, applied: true };
    });
  }

  /**
   * Moves a SCHEDULED job to a new due time (body: due_at or delay_ms, optional deadline_at; see
   * parseReschedule) and writes a SCHEDULED event with the bumped version, which replaces the
   * job's hot-set entry. A job in any other state is a CONFLICT naming that state.
   */
  async rescheduleJob(id: string, body: unknown, ctx: CommandContext = {}): Promise<Job> {
    return (await this.reschedule(id, body, ctx)).job;
  }

  /** rescheduleJob, telling a repeated request key (nothing changed) from an applied reschedule. */
  async reschedule(id: string, body: unknown, ctx: CommandContext = {}): Promise<CommandResult> {
    assertUuid(id);
    const key = requestKeyOf(ctx);
    // A repeat is answered before validation: the job has changed since (that was the point).
    if (key) {
      const held = await findRequestKey(this.#o.pool, key.tenantId, key.key);
      if (held) return this.#repeat(this.#o.pool, held);
    }
    // Validated against the job as read now (its deadline is kept unless the body replaces it);
    // the conditional UPDATE below then refuses the change if the job left SCHEDULED meanwhile.
    const current = await findJob(this.#o.pool, id);
    if (!current || (ctx.tenantId !== undefined && current.tenantId !== ctx.tenantId)) {
      throw new KairosError('NOT_FOUND', `no job ${id}`);
    }
    const parsed = parseReschedule(body, this.#now(), this.#o.limits, current);
    if (!parsed.ok) {
      throw new KairosError('VALIDATION', `${parsed.errors.length} invalid field(s)`, {
        fields: parsed.errors,
      });
    }
    const { dueAt, deadlineAt } = parsed.value;
    return inTransaction(this.#o.pool, async (tx) => {
      const repeat = await this.#repeatInTx(tx, key, 'RescheduleJob', id);
      if (repeat) return repeat;
      const rescheduled = await rescheduleScheduledJob(tx, id, dueAt, deadlineAt);
      if (!rescheduled) {
        const job = await findJob(tx, id);
        if (!job) throw new KairosError('NOT_FOUND', `no job ${id}`);
        throw new KairosError(
          'CONFLICT',
          `job ${id} is ${job.state}; only a SCHEDULED job can be rescheduled`,
        );
      }
      await writeOutbox(tx, [
        await jobEventOutboxRow(
          this.#o.codec,
          this.#o.jobEventsTopic,
          'SCHEDULED',
          rescheduled,
          this.#now(),
          ctx.traceparent ?? null,
        ),
      ]);
      return { job: rescheduled, applied: true };
    });
  }

  /** Claims the request key in the transaction; a key already held answers with its job, unchanged. */
  async #repeatInTx(
    tx: PoolClient,
    key: RequestKey | undefined,
    command: string,
    jobId: string,
  ): Promise<CommandResult | undefined> {
    if (!key) return undefined;
    const held = await claimRequestKey(tx, key.tenantId, key.key, command, { jobId });
    return held && this.#repeat(tx, held);
  }

  /** The answer to a repeated request key: its job as it is now (a schedule command's key is misused). */
  async #repeat(db: Pool | PoolClient, held: LedgerEntry): Promise<CommandResult> {
    if (held.jobId === null) throw keyUsedElsewhere(held);
    return { job: await this.#existing(db, held.jobId), applied: false };
  }

  async #assertTenant(tx: PoolClient, id: string, tenantId: string | undefined): Promise<void> {
    if (tenantId === undefined) return;
    const job = await findJob(tx, id);
    if (!job || job.tenantId !== tenantId) throw new KairosError('NOT_FOUND', `no job ${id}`);
  }

  async #existing(db: Pool | PoolClient, id: string): Promise<Job> {
    const job = await findJob(db, id);
    if (!job) throw new Error(`job ${id} of an applied request key vanished`);
    return job;
  }

  /** A new job's row, in the trace given (a replay's copy: a new trace of its own). */
  #row(spec: JobSpec, traceparent: string = traceparentOrNew(null)): NewJobRow {
    const id = newId();
    return { ...spec, id, routingKey: id, shard: shardOf(id, this.#o.jobEventPartitions), traceparent };
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}

function assertUuid(id: string): void {
  if (!isUuid(id)) {
    throw new KairosError('VALIDATION', `job id "${id}" is not a UUID`, {
      fields: [{ field: 'id', message: 'not a UUID' }],
    });
  }
}
