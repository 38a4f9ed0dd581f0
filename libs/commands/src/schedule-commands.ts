import {
  DEFAULT_BACKFILL_MAX_COUNT,
  DEFAULT_BACKFILL_RATE_PER_SEC,
  fireTimesBetween,
  jitterOffsetMs,
  KairosError,
  mergePatch,
  occurrenceId,
  parseScheduleSpec,
  previewFireTimes,
  scheduleRequestOf,
  shardOf,
  spreadDueTimes,
  type FieldError,
  type Job,
  type JobLimits,
  type PreviewEntry,
  type Schedule,
  type ScheduleSpec,
} from '@kairos/core';
import {
  cancelScheduledRuns,
  deleteOccurrences,
  findOccurrenceJob,
  findSchedule,
  findScheduleByKey,
  inTransaction,
  insertSchedule,
  lastOccurrenceFireAt,
  listSchedules,
  lockSchedule,
  saveSchedule,
  scheduleRuns,
  writeOutbox,
  type Pool,
  type PoolClient,
} from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';
import { SCHEMAS } from '@kairos/schemas';
import { v7 as uuidv7 } from 'uuid';
import { jobEventOutboxRow } from './events.js';
import {
  createRuns,
  DEFAULT_GENERATION,
  generateOccurrences,
  occurrenceJobRow,
  type GenerationDeps,
  type GenerationSettings,
} from './schedule-generation.js';

export interface ScheduleCommandsOptions {
  readonly pool: Pool;
  readonly codec: AvroCodec;
  /** Topic the connector routes job events to. */
  readonly jobEventsTopic: string;
  /** Partitions of that topic: a schedule's runs go to shard murmur2(schedule id) mod this. */
  readonly jobEventPartitions: number;
  readonly limits: JobLimits;
  /** Clock. Default: the system clock. */
  readonly now?: () => Date;
  /**
   * An occurrence at most this late when it comes due is on time; later, its schedule's misfire
   * policy decides. Stored with each schedule at creation and update. Default: 5,000 ms.
   */
  readonly misfireToleranceMs?: number;
  /** Generation ahead (the first occurrences are generated in the creating transaction). */
  readonly generation?: Partial<GenerationSettings>;
  /** Backfill: most runs per request (default 1,000) and runs coming due per second (default 10). */
  readonly backfill?: { readonly maxCount?: number; readonly ratePerSec?: number };
  /** Most fire times one preview returns. Default: 100. */
  readonly maxPreview?: number;
}

/** Who asks: a tenant scopes every command (another tenant's schedule is NOT_FOUND). */
export interface ScheduleContext {
  readonly tenantId?: string;
  readonly traceparent?: string | null;
}

export interface ScheduleCreateResult {
  readonly schedule: Schedule;
  /** False when the idempotency key matched an existing schedule, which is returned instead. */
  readonly created: boolean;
}

export interface TriggerResult {
  readonly job: Job;
  readonly created: boolean;
}

export interface BackfillResult {
  readonly schedule: Schedule;
  /** Occurrences in the range. */
  readonly requested: number;
  /** Runs created now (an occurrence backfilled before is not run again). */
  readonly created: readonly Job[];
  readonly ratePerSec: number;
}

export interface PreviewResult {
  readonly schedule: Schedule;
  readonly entries: readonly PreviewEntry[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEY = /^[\x21-\x7e]{1,256}$/;
const MAX_LIST = 200;

function invalid(fields: FieldError[]): KairosError {
  return new KairosError('VALIDATION', `${fields.length} invalid field(s)`, { fields });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The schedule command handlers every ingress shares (HTTP API today, schedule-requests later):
 * validate everything first and change nothing on any error; then write the schedule, its runs'
 * job rows and their outbox events in one transaction. Every schedule command locks the schedule
 * row, so commands and the generator never interleave on one schedule.
 */
export class ScheduleCommands {
  readonly #o: ScheduleCommandsOptions;
  readonly #gen: GenerationDeps;
  readonly #tolerance: number;
  readonly #backfillMax: number;
  readonly #backfillRate: number;

  private constructor(options: ScheduleCommandsOptions) {
    this.#o = options;
    this.#gen = {
      codec: options.codec,
      jobEventsTopic: options.jobEventsTopic,
      settings: { ...DEFAULT_GENERATION, ...options.generation },
    };
    this.#tolerance = options.misfireToleranceMs ?? 5000;
    this.#backfillMax = options.backfill?.maxCount ?? DEFAULT_BACKFILL_MAX_COUNT;
    this.#backfillRate = options.backfill?.ratePerSec ?? DEFAULT_BACKFILL_RATE_PER_SEC;
    if (!Number.isInteger(this.#tolerance) || this.#tolerance < 0)
      throw new RangeError(`misfireToleranceMs must be a non-negative integer, got ${this.#tolerance}`);
    if (!(this.#backfillRate > 0)) throw new RangeError('backfill.ratePerSec must be > 0');
  }

  /** Registers the job-event schema (idempotent) and returns ready handlers. */
  static async create(options: ScheduleCommandsOptions): Promise<ScheduleCommands> {
    await options.codec.register(options.jobEventsTopic, SCHEMAS.jobEvent);
    return new ScheduleCommands(options);
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
    const at = (f: string) => (prefix ? `${prefix}.${f}` : f);
    let idempotencyKey: string | null = null;
    let rest: unknown = body;
    const errors: FieldError[] = [];
    if (isObject(body) && 'idempotency_key' in body) {
      const { idempotency_key: key, ...others } = body;
      rest = others;
      if (typeof key === 'string' && KEY.test(key)) idempotencyKey = key;
      else errors.push({ field: at('idempotency_key'), message: '1 to 256 printable ASCII characters' });
    }
    const parsed = parseScheduleSpec(rest, this.#o.limits, this.#now(), prefix);
    if (!parsed.ok) errors.push(...parsed.errors);
    if (errors.length > 0 || !parsed.ok) throw invalid(errors);
    return { spec: parsed.value, idempotencyKey };
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
    const id = uuidv7();
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
    assertUuid(id);
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
    const errors: FieldError[] = [];
    if (typeof tenant !== 'string' || tenant === '') errors.push({ field: 'tenant', message: 'required' });
    const limit = page.limit === undefined ? 50 : Number(page.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) {
      errors.push({ field: 'limit', message: `an integer from 1 to ${MAX_LIST}` });
    }
    if (page.after !== undefined && (typeof page.after !== 'string' || !UUID.test(page.after))) {
      errors.push({ field: 'after', message: 'a schedule id (the next_after of the previous page)' });
    }
    if (errors.length > 0) throw invalid(errors);
    const rows = await listSchedules(
      this.#o.pool,
      tenant as string,
      (page.after as string) ?? null,
      limit + 1,
    );
    const schedules = rows.slice(0, limit);
    return { schedules, nextAfter: rows.length > limit ? (schedules.at(-1)?.id ?? null) : null };
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
    assertUuid(id);
    const current = await this.getSchedule(id, options);
    const merged = options.merge ? mergePatch(scheduleRequestOf(current), body) : body;
    if (isObject(body) && 'idempotency_key' in body) {
      throw invalid([{ field: 'idempotency_key', message: 'cannot change; it belongs to the creation' }]);
    }
    const { spec } = this.validate(merged);
    if (spec.tenantId !== current.tenantId) {
      throw invalid([
        { field: 'tenant', message: `a schedule's tenant cannot change (it is ${current.tenantId})` },
      ]);
    }
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await this.#lockLive(tx, id, options);
      if (options.expectedVersion !== undefined && s.version !== options.expectedVersion) {
        throw new KairosError(
          'CONFLICT',
          `schedule ${id} is at version ${s.version}, not ${options.expectedVersion}; read it again and retry`,
        );
      }
      const now = this.#now();
      const version = s.version + 1;
      const rewound = await this.#cancelAhead(tx, s, now, `superseded by version ${version} of its schedule`);
      const lastFireAt = await lastOccurrenceFireAt(tx, id);
      const cursorInstant =
        rewound !== null ? Math.min(rewound, now.getTime()) : Math.max(s.cursor.instant, now.getTime());
      const saved = await saveSchedule(tx, {
        ...s,
        ...spec,
        version,
        misfireToleranceMs: this.#tolerance,
        cursor:
          rewound === null && s.cursor.instant >= now.getTime()
            ? s.cursor
            : { instant: cursorInstant, nominal: null },
        lastFireAt,
        generateAt: s.state === 'ACTIVE' ? now : null,
        updatedAt: now,
      });
      if (saved.state !== 'ACTIVE') return saved;
      return (await generateOccurrences(tx, this.#gen, saved, now.getTime())).schedule;
    });
  }

  /**
   * Pauses: no regular run is dispatched until resume. Runs not dispatched yet whose time is ahead
   * are cancelled (and will be generated again if the resume catches up); runs already dispatched
   * finish. Manual runs (trigger, backfill) still run. Pausing a paused schedule changes nothing.
   */
  async pauseSchedule(id: string, ctx: ScheduleContext = {}): Promise<Schedule> {
    assertUuid(id);
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await this.#lockLive(tx, id, ctx);
      if (s.state === 'PAUSED') return s;
      const now = this.#now();
      const rewound = await this.#cancelAhead(tx, s, now, 'the schedule was paused');
      return saveSchedule(tx, {
        ...s,
        state: 'PAUSED',
        version: s.version + 1,
        cursor: rewound === null ? s.cursor : { instant: rewound, nominal: null },
        lastFireAt: await lastOccurrenceFireAt(tx, id),
        generateAt: null,
        pausedAt: now,
        updatedAt: now,
      });
    });
  }

  /**
   * Resumes a paused schedule. By default what came due while it was paused is not run: pausing
   * means "do not run now", and the schedule resumes with its next occurrence after the resume.
   * With `catch_up: true` the occurrences missed while paused are treated as misfires: the
   * schedule's misfire policy decides which of them run. Resuming an active schedule changes nothing.
   */
  async resumeSchedule(id: string, body: unknown = {}, ctx: ScheduleContext = {}): Promise<Schedule> {
    assertUuid(id);
    const b = body ?? {};
    if (!isObject(b)) throw invalid([{ field: '(body)', message: 'must be an object or empty' }]);
    const unknown = Object.keys(b).filter((k) => k !== 'catch_up');
    if (unknown.length > 0 || (b.catch_up !== undefined && typeof b.catch_up !== 'boolean')) {
      throw invalid([
        ...unknown.map((k) => ({ field: k, message: 'unknown field' })),
        ...(b.catch_up !== undefined && typeof b.catch_up !== 'boolean'
          ? [{ field: 'catch_up', message: 'must be a boolean' }]
          : []),
      ]);
    }
    const catchUp = b.catch_up === true;
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await this.#lockLive(tx, id, ctx);
      if (s.state === 'ACTIVE') return s;
      const now = this.#now();
      const saved = await saveSchedule(tx, {
        ...s,
        state: 'ACTIVE',
        version: s.version + 1,
        cursor:
          catchUp || s.cursor.instant >= now.getTime() ? s.cursor : { instant: now.getTime(), nominal: null },
        generateAt: now,
        pausedAt: null,
        updatedAt: now,
      });
      return (await generateOccurrences(tx, this.#gen, saved, now.getTime())).schedule;
    });
  }

  /**
   * Deletes a schedule: every run not dispatched yet (manual ones included) is cancelled; runs
   * already dispatched finish. The schedule stays readable, state DELETED. Deleting again changes nothing.
   */
  async deleteSchedule(id: string, ctx: ScheduleContext = {}): Promise<Schedule> {
    assertUuid(id);
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await lockSchedule(tx, id);
      if (!s || (ctx.tenantId !== undefined && s.tenantId !== ctx.tenantId)) {
        throw new KairosError('NOT_FOUND', `no schedule ${id}`);
      }
      if (s.state === 'DELETED') return s;
      const now = this.#now();
      const cancelled = await cancelScheduledRuns(
        tx,
        id,
        ['regular', 'catch_up', 'trigger', 'backfill'],
        null,
        'the schedule was deleted',
      );
      await this.#cancelEvents(tx, cancelled, now, ctx);
      return saveSchedule(tx, {
        ...s,
        state: 'DELETED',
        version: s.version + 1,
        generateAt: null,
        nextFireAt: null,
        deletedAt: now,
        updatedAt: now,
      });
    });
  }

  /**
   * Runs the schedule once now, as an extra occurrence with its own id (the schedule's regular
   * occurrences are unaffected). With an idempotency key the same trigger is created once.
   * Works on a paused schedule too (a manual run); the overlap policy applies as to any run.
   */
  async triggerNow(id: string, body: unknown = {}, ctx: ScheduleContext = {}): Promise<TriggerResult> {
    assertUuid(id);
    const b = body ?? {};
    if (!isObject(b)) throw invalid([{ field: '(body)', message: 'must be an object or empty' }]);
    const errors: FieldError[] = Object.keys(b)
      .filter((k) => k !== 'idempotency_key')
      .map((k) => ({ field: k, message: 'unknown field' }));
    const key = b.idempotency_key;
    if (key !== undefined && !(typeof key === 'string' && KEY.test(key))) {
      errors.push({ field: 'idempotency_key', message: '1 to 256 printable ASCII characters' });
    }
    if (errors.length > 0) throw invalid(errors);
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await this.#lockLive(tx, id, ctx);
      const now = this.#now();
      const occurrence = occurrenceId(id, `trigger ${typeof key === 'string' ? key : uuidv7()}`);
      const existing = await findOccurrenceJob(tx, id, occurrence);
      if (existing) return { job: existing, created: false };
      const row = occurrenceJobRow(s, {
        occurrenceId: occurrence,
        occurrenceAt: now.getTime(),
        kind: 'trigger',
        dueAt: now.getTime(),
        misfireAfter: null,
      });
      const [job] = await createRuns(
        tx,
        this.#gen,
        s,
        [{ row, nominal: null }],
        now,
        ctx.traceparent ?? null,
      );
      if (!job) throw new Error(`trigger ${occurrence} was neither created nor found`);
      return { job, created: true };
    });
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
    const { count, after } = this.#previewQuery(query);
    const schedule = await this.getSchedule(id, ctx);
    const offset = jitterOffsetMs(schedule.tenantId, schedule.id, schedule.jitterMs);
    return { schedule, entries: previewFireTimes(schedule, after, count, offset) };
  }

  /** Preview of a schedule not created yet (the request body of a create): validates it too. */
  previewSpec(body: unknown, query: { count?: unknown; after?: unknown } = {}): PreviewEntry[] {
    const { count, after } = this.#previewQuery(query);
    const { spec } = this.validate(body);
    return previewFireTimes(spec, after, count, 0);
  }

  /**
   * Runs the schedule's occurrences of a past range [from, to) (the cron in the schedule's zone and
   * DST policy; its start_at and end_at do not apply, the range says where): at most max_count of them (default
   * and ceiling: the configured maximum; a range with more is refused, nothing is created), coming
   * due at no more than the configured rate from now on (after any earlier backfill of the schedule
   * still in progress), each as its own run (occurrence id of "backfill <nominal time>", so asking
   * twice for the same range runs each occurrence once). The overlap policy applies to them.
   */
  async backfill(id: string, body: unknown, ctx: ScheduleContext = {}): Promise<BackfillResult> {
    assertUuid(id);
    const now = this.#now();
    const errors: FieldError[] = [];
    if (!isObject(body)) throw invalid([{ field: '(body)', message: 'must be {"from": ..., "to": ...}' }]);
    for (const k of Object.keys(body)) {
      if (!['from', 'to', 'max_count'].includes(k)) errors.push({ field: k, message: 'unknown field' });
    }
    const time = (field: 'from' | 'to'): number | undefined => {
      const v = body[field];
      const ms = typeof v === 'string' && /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? Date.parse(v) : NaN;
      if (Number.isNaN(ms)) {
        errors.push({ field, message: 'an ISO-8601 date-time with an offset' });
        return undefined;
      }
      return ms;
    };
    const from = time('from');
    const to = time('to');
    const maxCount = body.max_count === undefined ? this.#backfillMax : body.max_count;
    if (
      typeof maxCount !== 'number' ||
      !Number.isInteger(maxCount) ||
      maxCount < 1 ||
      maxCount > this.#backfillMax
    ) {
      errors.push({ field: 'max_count', message: `an integer from 1 to ${this.#backfillMax}` });
    }
    if (from !== undefined && to !== undefined && to <= from) {
      errors.push({ field: 'to', message: 'must be after from' });
    }
    if (to !== undefined && to > now.getTime()) {
      errors.push({
        field: 'to',
        message: 'must not be in the future: the schedule generates its future occurrences itself',
      });
    }
    if (errors.length > 0 || from === undefined || to === undefined || typeof maxCount !== 'number') {
      throw invalid(errors);
    }
    const schedule = await this.getSchedule(id, ctx);
    // The range is explicit: the schedule's own start_at and end_at (its live window) do not cut it.
    const occurrences = fireTimesBetween({ ...schedule, startAt: null, endAt: null }, from, to, maxCount + 1);
    if (occurrences.length > maxCount) {
      throw invalid([
        {
          field: 'to',
          message: `the range holds more than ${maxCount} occurrences; narrow it or raise max_count (at most ${this.#backfillMax})`,
        },
      ]);
    }
    return inTransaction(this.#o.pool, async (tx) => {
      const s = await this.#lockLive(tx, id, ctx);
      const start = Math.max(now.getTime(), s.backfillNextAt?.getTime() ?? 0);
      const due = spreadDueTimes(occurrences.length, start, this.#backfillRate);
      const runs = occurrences.map((o, i) => ({
        nominal: o.nominal,
        row: occurrenceJobRow(s, {
          occurrenceId: occurrenceId(id, `backfill ${o.nominal}`, o.instantIndex),
          occurrenceAt: o.instant,
          kind: 'backfill',
          dueAt: due[i] ?? start,
          misfireAfter: null,
        }),
      }));
      const created = await createRuns(tx, this.#gen, s, runs, now, ctx.traceparent ?? null);
      const last = created.reduce((m, j) => Math.max(m, j.dueAt.getTime()), 0);
      const saved =
        created.length === 0
          ? s
          : await saveSchedule(tx, {
              ...s,
              backfillNextAt: new Date(last + Math.ceil(1000 / this.#backfillRate)),
              updatedAt: now,
            });
      return { schedule: saved, requested: occurrences.length, created, ratePerSec: this.#backfillRate };
    });
  }

  /** The schedule's runs, newest occurrence first (`before`: an occurrence time, for the next page). */
  async runs(
    id: string,
    page: { limit?: unknown; before?: unknown } = {},
    ctx: ScheduleContext = {},
  ): Promise<Job[]> {
    const errors: FieldError[] = [];
    const limit = page.limit === undefined ? 50 : Number(page.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      errors.push({ field: 'limit', message: 'an integer from 1 to 1000' });
    }
    const before =
      page.before === undefined ? null : typeof page.before === 'string' ? Date.parse(page.before) : NaN;
    if (before !== null && Number.isNaN(before))
      errors.push({ field: 'before', message: 'an ISO-8601 date-time' });
    if (errors.length > 0) throw invalid(errors);
    const s = await this.getSchedule(id, ctx);
    return scheduleRuns(this.#o.pool, s.id, before === null ? null : new Date(before), limit);
  }

  #previewQuery(query: { count?: unknown; after?: unknown }): { count: number; after: number } {
    const max = this.#o.maxPreview ?? 100;
    const errors: FieldError[] = [];
    const count = query.count === undefined ? 10 : Number(query.count);
    if (!Number.isInteger(count) || count < 1 || count > max) {
      errors.push({ field: 'count', message: `an integer from 1 to ${max}` });
    }
    const after =
      query.after === undefined
        ? this.#now().getTime()
        : typeof query.after === 'string'
          ? Date.parse(query.after)
          : NaN;
    if (Number.isNaN(after)) errors.push({ field: 'after', message: 'an ISO-8601 date-time' });
    if (errors.length > 0) throw invalid(errors);
    return { count, after };
  }

  /** Locks a schedule that exists for the caller and is not deleted (CONFLICT when it is). */
  async #lockLive(tx: PoolClient, id: string, ctx: ScheduleContext): Promise<Schedule> {
    const s = await lockSchedule(tx, id);
    if (!s || (ctx.tenantId !== undefined && s.tenantId !== ctx.tenantId)) {
      throw new KairosError('NOT_FOUND', `no schedule ${id}`);
    }
    if (s.state === 'DELETED') throw new KairosError('CONFLICT', `schedule ${id} is DELETED`);
    return s;
  }

  /**
   * Cancels the schedule's regular and catch-up runs not dispatched yet and due after `now`, and
   * forgets their occurrences so they can be generated again. Returns the instant just before the
   * first cancelled occurrence (where generation must resume), or null when none was cancelled.
   */
  async #cancelAhead(tx: PoolClient, s: Schedule, now: Date, reason: string): Promise<number | null> {
    const cancelled = await cancelScheduledRuns(tx, s.id, ['regular', 'catch_up'], now, reason);
    await deleteOccurrences(
      tx,
      s.id,
      cancelled.flatMap((j) => (j.occurrence ? [j.occurrence.occurrenceId] : [])),
    );
    await this.#cancelEvents(tx, cancelled, now, {});
    const first = cancelled.reduce(
      (m, j) => Math.min(m, j.occurrence?.occurrenceAt.getTime() ?? Infinity),
      Infinity,
    );
    return Number.isFinite(first) ? first - 1 : null;
  }

  async #cancelEvents(tx: PoolClient, jobs: readonly Job[], now: Date, ctx: ScheduleContext): Promise<void> {
    const events = [];
    for (const job of jobs) {
      events.push(
        await jobEventOutboxRow(
          this.#o.codec,
          this.#o.jobEventsTopic,
          'CANCELLED',
          job,
          now,
          ctx.traceparent ?? null,
        ),
      );
    }
    await writeOutbox(tx, events);
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}

function assertUuid(id: string): void {
  if (!UUID.test(id)) {
    throw new KairosError('VALIDATION', `schedule id "${id}" is not a UUID`, {
      fields: [{ field: 'id', message: 'not a UUID' }],
    });
  }
}
