import {
  DEFAULT_BACKFILL_MAX_COUNT,
  DEFAULT_BACKFILL_RATE_PER_SEC,
  jitterOffsetMs,
  KairosError,
  mergePatch,
  parseScheduleSpec,
  previewFireTimes,
  scheduleRequestOf,
  shardOf,
  type FieldError,
  type Job,
  type PreviewEntry,
  type Schedule,
  type ScheduleRunFacts,
  type ScheduleSpec,
} from '@kairos/core';
import {
  claimRequestKey,
  findJob,
  findRequestKey,
  findSchedule,
  findScheduleByKey,
  inTransaction,
  insertSchedule,
  listSchedules,
  recordRequestJob,
  scheduleRunFacts,
  scheduleRuns,
  type LedgerEntry,
  type Pool,
  type PoolClient,
} from '@kairos/db';
import { newId } from './ids.js';
import { keyUsedElsewhere, requestKeyOf } from './request-keys.js';
import { backfillSchedule, type BackfillDeps, type BackfillResult } from './schedule-backfill.js';
import { deleteIn, pauseIn, resumeIn, triggerIn, updateIn, type ChangeDeps } from './schedule-changes.js';
import {
  DEFAULT_GENERATION,
  generateOccurrences,
  type GenerationDeps,
  type GenerationSettings,
} from './schedule-generation.js';
import {
  assertScheduleId,
  invalid,
  isObject,
  parseBackfillBody,
  parseListPage,
  parsePreviewQuery,
  parseResumeBody,
  parseRunsPage,
  parseTriggerBody,
  takeIdempotencyKey,
} from './schedule-input.js';
import { lockLive, lockOwn } from './schedule-steps.js';
import {
  SCHEDULE_CHANGE_COMMANDS,
  type PreviewResult,
  type ScheduleChange,
  type ScheduleChangeResult,
  type ScheduleCommandsOptions,
  type ScheduleContext,
  type ScheduleCreateResult,
  type TriggerResult,
} from './schedule-types.js';

/** A change validated outside the transaction, applied inside it to the locked schedule. */
type Step = (tx: PoolClient, s: Schedule, now: Date) => Promise<ScheduleChangeResult>;

/**
 * The schedule command handlers every ingress shares (the HTTP API and schedule-requests):
 * validate everything first and change nothing on any error; then write the schedule, its runs'
 * job rows and their outbox events in one transaction. Every schedule command locks the schedule
 * row, so commands and the generator never interleave on one schedule.
 */
export class ScheduleCommands {
  readonly #o: ScheduleCommandsOptions;
  readonly #gen: GenerationDeps;
  readonly #tolerance: number;
  readonly #backfill: BackfillDeps;
  readonly #changes: ChangeDeps;

  constructor(options: ScheduleCommandsOptions) {
    this.#o = options;
    this.#gen = {
      codec: options.codec,
      jobEventsTopic: options.jobEventsTopic,
      settings: { ...DEFAULT_GENERATION, ...options.generation },
    };
    this.#tolerance = options.misfireToleranceMs ?? 5000;
    this.#backfill = {
      pool: options.pool,
      gen: this.#gen,
      maxCount: options.backfill?.maxCount ?? DEFAULT_BACKFILL_MAX_COUNT,
      ratePerSec: options.backfill?.ratePerSec ?? DEFAULT_BACKFILL_RATE_PER_SEC,
    };
    if (!Number.isInteger(this.#tolerance) || this.#tolerance < 0)
      throw new RangeError(`misfireToleranceMs must be a non-negative integer, got ${this.#tolerance}`);
    if (!(this.#backfill.ratePerSec > 0)) throw new RangeError('backfill.ratePerSec must be > 0');
    this.#changes = { gen: this.#gen, misfireToleranceMs: this.#tolerance };
  }

  get generation(): GenerationSettings {
    return this.#gen.settings;
  }

  /**
   * Validates a create (or full update) request; throws one VALIDATION error naming every bad
   * field. `idempotency_key` (create only) is taken out before the schedule itself is validated.
   */
  validate(
    body: unknown,
    ctx: { pathPrefix?: string } = {},
  ): { spec: ScheduleSpec; idempotencyKey: string | null } {
    const prefix = ctx.pathPrefix ?? '';
    const errors: FieldError[] = [];
    const { key, rest } = takeIdempotencyKey(
      body,
      prefix ? `${prefix}.idempotency_key` : 'idempotency_key',
      errors,
    );
    const parsed = parseScheduleSpec(rest, this.#o.limits, this.#now(), prefix);
    if (!parsed.ok) errors.push(...parsed.errors);
    if (errors.length > 0 || !parsed.ok) throw invalid(errors);
    return { spec: parsed.value, idempotencyKey: key };
  }

  /**
   * Creates a schedule and generates its first occurrences in the same transaction. A repeated
   * idempotency key (per tenant) returns the first schedule, unchanged.
   */
  async createSchedule(body: unknown, ctx: ScheduleContext = {}): Promise<ScheduleCreateResult> {
    const { spec, idempotencyKey } = this.validate(body);
    if (ctx.tenantId !== undefined && spec.tenantId !== ctx.tenantId) {
      throw invalid([{ field: 'tenant', message: `must be ${ctx.tenantId}` }]);
    }
    if (idempotencyKey !== null) {
      const existing = await findScheduleByKey(this.#o.pool, spec.tenantId, idempotencyKey);
      if (existing) return { schedule: existing, created: false };
    }
    const now = this.#now();
    const id = newId();
    const draft: Schedule = {
      ...spec,
      id,
      idempotencyKey,
      state: 'ACTIVE',
      version: 1,
      misfireToleranceMs: this.#tolerance,
      routingKey: id,
      shard: shardOf(id, this.#o.jobEventPartitions),
      // Occurrences strictly after the creation: none of the past is a misfire.
      cursor: { instant: now.getTime(), nominal: null },
      lastFireAt: null,
      nextFireAt: null,
      generateAt: now,
      backfillNextAt: null,
      misfiresSkipped: 0,
      slaSince: spec.slaMs === null ? null : now,
      createdAt: now,
      updatedAt: now,
      pausedAt: null,
      deletedAt: null,
    };
    return inTransaction(this.#o.pool, async (tx) => {
      const inserted = await insertSchedule(tx, draft);
      if (!inserted) {
        const first =
          idempotencyKey === null ? undefined : await findScheduleByKey(tx, spec.tenantId, idempotencyKey);
        if (!first) throw new Error('a schedule insert conflicted without an idempotency key');
        return { schedule: first, created: false };
      }
      const { schedule } = await generateOccurrences(tx, this.#gen, inserted, now.getTime());
      return { schedule, created: true };
    });
  }

  async getSchedule(id: string, ctx: ScheduleContext = {}): Promise<Schedule> {
    assertScheduleId(id);
    const s = await findSchedule(this.#o.pool, id);
    if (!s || (ctx.tenantId !== undefined && s.tenantId !== ctx.tenantId)) {
      throw new KairosError('NOT_FOUND', `no schedule ${id}`);
    }
    return s;
  }

  /** A tenant's schedules (not deleted), in creation order, `limit` per page after the `after` id. */
  async listSchedules(
    tenant: unknown,
    page: { limit?: unknown; after?: unknown } = {},
  ): Promise<{ schedules: Schedule[]; nextAfter: string | null }> {
    const q = parseListPage(tenant, page);
    const rows = await listSchedules(this.#o.pool, q.tenant, q.after, q.limit + 1);
    const schedules = rows.slice(0, q.limit);
    return { schedules, nextAfter: rows.length > q.limit ? (schedules.at(-1)?.id ?? null) : null };
  }

  /**
   * Changes a schedule (update, pause, resume, delete, trigger; see each method). With a request
   * key in `ctx` the change applies at most once per (tenant, key): the key is claimed in the
   * change's own transaction, and a repeat answers with the schedule as it is now, `applied: false`.
   */
  async change(change: ScheduleChange, ctx: ScheduleContext = {}): Promise<ScheduleChangeResult> {
    assertScheduleId(change.id);
    const key = requestKeyOf(ctx);
    const pool = this.#o.pool;
    // A repeat is answered before validation: the schedule may have changed since (that was the point).
    const early = key && (await findRequestKey(pool, key.tenantId, key.key));
    if (early) return this.#repeat(pool, early);
    const step = await this.#prepare(change, ctx);
    return inTransaction(pool, async (tx) => {
      if (key) {
        const command = SCHEDULE_CHANGE_COMMANDS[change.kind];
        const held = await claimRequestKey(tx, key.tenantId, key.key, command, { scheduleId: change.id });
        if (held) return this.#repeat(tx, held);
      }
      // A deleted schedule can only be deleted (again: nothing changes); anything else is a CONFLICT.
      const s = await (change.kind === 'delete' ? lockOwn : lockLive)(tx, change.id, ctx);
      const r = await step(tx, s, this.#now());
      if (key && r.job) await recordRequestJob(tx, key.tenantId, key.key, r.job.id);
      return r;
    });
  }

  /**
   * Replaces a schedule's rules (`merge`: a JSON merge patch onto the current ones) as a new
   * version. Runs not dispatched yet whose time is still ahead are cancelled and generated anew
   * under the new rules, from the moment of the update; runs already dispatched are left alone.
   * `expectedVersion` (If-Match) refuses the update when the schedule changed meanwhile.
   */
  async updateSchedule(
    id: string,
    body: unknown,
    options: { merge?: boolean; expectedVersion?: number } & ScheduleContext = {},
  ): Promise<Schedule> {
    const { merge, expectedVersion, ...ctx } = options;
    return (await this.change({ kind: 'update', id, body, merge, expectedVersion }, ctx)).schedule;
  }

  /**
   * Pauses: no regular run is dispatched until resume. Runs not dispatched yet whose time is ahead
   * are cancelled (and will be generated again if the resume catches up); runs already dispatched
   * finish. Manual runs (trigger, backfill) still run. Pausing a paused schedule changes nothing.
   */
  async pauseSchedule(id: string, ctx: ScheduleContext = {}): Promise<Schedule> {
    return (await this.change({ kind: 'pause', id }, ctx)).schedule;
  }

  /**
   * Resumes a paused schedule. By default what came due while it was paused is not run: pausing
   * means "do not run now", and the schedule resumes with its next occurrence after the resume.
   * With `catch_up: true` the occurrences missed while paused are treated as misfires: the
   * schedule's misfire policy decides which of them run. Resuming an active schedule changes nothing.
   */
  async resumeSchedule(id: string, body: unknown = {}, ctx: ScheduleContext = {}): Promise<Schedule> {
    return (await this.change({ kind: 'resume', id, body }, ctx)).schedule;
  }

  /**
   * Deletes a schedule: every run not dispatched yet (manual ones included) is cancelled; runs
   * already dispatched finish. The schedule stays readable, state DELETED. Deleting again changes nothing.
   */
  async deleteSchedule(id: string, ctx: ScheduleContext = {}): Promise<Schedule> {
    return (await this.change({ kind: 'delete', id }, ctx)).schedule;
  }

  /**
   * Runs the schedule once now, as an extra occurrence with its own id (the schedule's regular
   * occurrences are unaffected). With an idempotency key the same trigger is created once.
   * Works on a paused schedule too (a manual run); the overlap policy applies as to any run.
   */
  async triggerNow(id: string, body: unknown = {}, ctx: ScheduleContext = {}): Promise<TriggerResult> {
    const r = await this.change({ kind: 'trigger', id, body }, ctx);
    if (!r.job) throw new Error(`trigger of schedule ${id} answered no run`);
    return { job: r.job, created: r.applied };
  }

  /**
   * The next `count` fire times (after `after`, default now) as instants and local wall-clock
   * times, with the schedule's jitter. A paused schedule shows what it would do once resumed.
   */
  async preview(
    id: string,
    query: { count?: unknown; after?: unknown } = {},
    ctx: ScheduleContext = {},
  ): Promise<PreviewResult> {
    const { count, after } = parsePreviewQuery(query, this.#now(), this.#o.maxPreview ?? 100);
    const schedule = await this.getSchedule(id, ctx);
    const offset = jitterOffsetMs(schedule.tenantId, schedule.id, schedule.jitterMs);
    return { schedule, entries: previewFireTimes(schedule, after, count, offset) };
  }

  /** Preview of a schedule not created yet (the request body of a create): validates it too. */
  previewSpec(body: unknown, query: { count?: unknown; after?: unknown } = {}): PreviewEntry[] {
    const { count, after } = parsePreviewQuery(query, this.#now(), this.#o.maxPreview ?? 100);
    const { spec } = this.validate(body);
    return previewFireTimes(spec, after, count, 0);
  }

  /** Runs the occurrences of a past range [from, to) as backfill runs (see backfillSchedule). */
  async backfill(id: string, body: unknown, ctx: ScheduleContext = {}): Promise<BackfillResult> {
    assertScheduleId(id);
    const now = this.#now();
    const range = parseBackfillBody(body, now, this.#backfill.maxCount);
    const schedule = await this.getSchedule(id, ctx);
    return backfillSchedule(this.#backfill, schedule, range, now, ctx);
  }

  /** The schedule's runs, newest occurrence first (`before`: an occurrence time, for the next page). */
  async runs(
    id: string,
    page: { limit?: unknown; before?: unknown } = {},
    ctx: ScheduleContext = {},
  ): Promise<Job[]> {
    const { limit, before } = parseRunsPage(page);
    const s = await this.getSchedule(id, ctx);
    return scheduleRuns(this.#o.pool, s.id, before, limit);
  }

  /** What happened to the schedules' runs (last success, late runs, misfires, skips), by id. */
  runFacts(ids: readonly string[]): Promise<Map<string, ScheduleRunFacts>> {
    return scheduleRunFacts(this.#o.pool, ids);
  }

  /** Validates a change (outside any transaction) into the step that applies it. */
  async #prepare(c: ScheduleChange, ctx: ScheduleContext): Promise<Step> {
    const deps = this.#changes;
    const traceparent = ctx.traceparent ?? null;
    const done = (schedule: Schedule) => ({ schedule, job: null, applied: true });
    switch (c.kind) {
      case 'update': {
        const spec = await this.#updateSpec(c.id, c.body, c.merge === true, ctx);
        return async (tx, s, now) => done(await updateIn(deps, tx, s, spec, c.expectedVersion, now));
      }
      case 'pause':
        return async (tx, s, now) => done(await pauseIn(deps, tx, s, now));
      case 'resume': {
        const { catchUp } = parseResumeBody(c.body);
        return async (tx, s, now) => done(await resumeIn(deps, tx, s, catchUp, now));
      }
      case 'delete':
        return async (tx, s, now) => done(await deleteIn(deps, tx, s, now, traceparent));
      case 'trigger': {
        const { key } = parseTriggerBody(c.body);
        return (tx, s, now) => triggerIn(deps, tx, s, key, now, traceparent);
      }
    }
  }

  /** The new rules of an update, validated against the schedule as it is now. */
  async #updateSpec(id: string, body: unknown, merge: boolean, ctx: ScheduleContext): Promise<ScheduleSpec> {
    const current = await this.getSchedule(id, ctx);
    const merged = merge ? mergePatch(scheduleRequestOf(current), body) : body;
    if (isObject(body) && 'idempotency_key' in body) {
      throw invalid([{ field: 'idempotency_key', message: 'cannot change; it belongs to the creation' }]);
    }
    const { spec } = this.validate(merged);
    if (spec.tenantId !== current.tenantId) {
      throw invalid([
        { field: 'tenant', message: `a schedule's tenant cannot change (it is ${current.tenantId})` },
      ]);
    }
    return spec;
  }

  async #repeat(db: Pool | PoolClient, held: LedgerEntry): Promise<ScheduleChangeResult> {
    if (held.scheduleId === null) throw keyUsedElsewhere(held);
    const schedule = await findSchedule(db, held.scheduleId);
    if (!schedule) throw new Error(`schedule ${held.scheduleId} of an applied request key vanished`);
    const job = held.jobId === null ? null : ((await findJob(db, held.jobId)) ?? null);
    return { schedule, job, applied: false };
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}
