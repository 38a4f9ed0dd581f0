import {
  jitteredFireAt,
  jitterOffsetMs,
  newestOccurrences,
  occurrenceId,
  occurrencesAfter,
  planMisfires,
  selectMissedRuns,
  traceparentOrNew,
  type Cursor,
  type Job,
  type Occurrence,
  type RunKind,
  type Schedule,
} from '@kairos/core';
import {
  countSkippedRuns,
  dispatchedCatchUps,
  insertJobs,
  insertOccurrences,
  lockLateRuns,
  newestOccurrenceInstants,
  releaseLateRuns,
  saveSchedule,
  skipRuns,
  writeOutbox,
  type NewJobRow,
  type OccurrenceRow,
  type OutboxRow,
  type PoolClient,
} from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';
import { newId } from './ids.js';
import { jobEventOutboxRow } from './events.js';

/** How far ahead occurrences are generated. */
export interface GenerationSettings {
  /** Occurrences due within this window are generated (ms). Default: 120,000. */
  readonly lookaheadMs: number;
  /** ... and at least this many future occurrences, however far. Default: 2. */
  readonly minAhead: number;
  /** Most occurrences one pass creates for one schedule (a pass continues next tick). Default: 1,000. */
  readonly maxPerPass: number;
}

export const DEFAULT_GENERATION: GenerationSettings = { lookaheadMs: 120_000, minAhead: 2, maxPerPass: 1000 };

export interface GenerationDeps {
  readonly codec: AvroCodec;
  readonly jobEventsTopic: string;
  readonly settings: GenerationSettings;
}

/** What one generation pass did to one schedule. */
export interface GenerationResult {
  /** The schedule as saved (cursor advanced). */
  readonly schedule: Schedule;
  /** Jobs created for new occurrences (regular and catch-up). */
  readonly created: readonly Job[];
  /** Late runs the misfire policy kept: released to run now. */
  readonly released: number;
  /** Late runs the misfire policy dropped (recorded SKIPPED). */
  readonly skipped: number;
  /** Missed occurrences dropped before any job existed for them. */
  readonly dropped: number;
}

/** A job row for one run of a schedule. */
export function occurrenceJobRow(
  schedule: Schedule,
  run: {
    readonly occurrenceId: string;
    readonly occurrenceAt: number;
    readonly kind: RunKind;
    readonly dueAt: number;
    readonly misfireAfter: number | null;
  },
): NewJobRow {
  const t = schedule.job;
  return {
    id: newId(),
    tenantId: schedule.tenantId,
    idempotencyKey: null,
    type: t.type,
    resourceClass: t.resourceClass,
    payload: t.payload,
    dueAt: new Date(run.dueAt),
    deadlineAt: t.deadlineMs === null ? null : new Date(run.dueAt + t.deadlineMs),
    maxAttempts: t.maxAttempts,
    retry: t.retry,
    routingKey: schedule.routingKey,
    shard: schedule.shard,
    occurrence: {
      scheduleId: schedule.id,
      occurrenceId: run.occurrenceId,
      occurrenceAt: new Date(run.occurrenceAt),
      kind: run.kind,
      misfireAfter: run.misfireAfter === null ? null : new Date(run.misfireAfter),
    },
    // Set by createRuns: the request's trace context, or a new trace per run.
    traceparent: null,
  };
}

/**
 * Records runs in the occurrence ledger and creates the job (row + SCHEDULED event in the outbox)
 * of each one not recorded before, in the caller's transaction. Returns the jobs created.
 */
export async function createRuns(
  tx: PoolClient,
  deps: Pick<GenerationDeps, 'codec' | 'jobEventsTopic'>,
  schedule: Schedule,
  runs: readonly { row: NewJobRow; nominal: string | null }[],
  now: Date,
  traceparent: string | null = null,
): Promise<Job[]> {
  if (runs.length === 0) return [];
  const ledger: OccurrenceRow[] = runs.map(({ row, nominal }) => {
    const o = row.occurrence;
    if (!o) throw new Error('a run of a schedule needs its occurrence');
    return {
      scheduleId: schedule.id,
      occurrenceId: o.occurrenceId,
      kind: o.kind as RunKind,
      nominal,
      occurrenceAt: o.occurrenceAt,
      fireAt: row.dueAt,
      jobId: row.id,
      scheduleVersion: schedule.version,
    };
  });
  const recorded = await insertOccurrences(tx, ledger);
  const fresh = runs
    .filter((r) => recorded.has(r.row.occurrence?.occurrenceId ?? ''))
    .map((r) => ({ ...r.row, traceparent: r.row.traceparent ?? traceparentOrNew(traceparent) }));
  const created = await insertJobs(tx, fresh);
  const events: OutboxRow[] = [];
  for (const r of fresh) {
    events.push(
      await jobEventOutboxRow(
        deps.codec,
        deps.jobEventsTopic,
        'SCHEDULED',
        { ...r, version: 1, fence: 1, attempt: 1 },
        now,
        traceparent,
      ),
    );
  }
  await writeOutbox(tx, events);
  return created;
}

const position = (o: Occurrence) => ({ instant: o.instant, nominal: o.nominal });

function storedCursor(c: Cursor): Schedule['cursor'] {
  if (typeof c === 'number') return { instant: c, nominal: null };
  if (c instanceof Date) return { instant: c.getTime(), nominal: null };
  return { instant: c.instant, nominal: c.nominal };
}

function cursorOf(s: Schedule): Cursor {
  return s.cursor.nominal === null
    ? s.cursor.instant
    : { instant: s.cursor.instant, nominal: s.cursor.nominal };
}

/**
 * One generation pass over a schedule locked by the caller, at `nowMs`:
 *
 * 1. Late runs. A run whose fire time passed by more than the schedule's misfire tolerance
 *    without being dispatched (the delay tier was down) is never dispatched on its own: the
 *    dispatcher leaves it, and this pass decides. Occurrences never generated whose time passed
 *    the same way (the generator itself was down past its lookahead) join them. The misfire
 *    policy picks from all of them at once — skip none, the latest, the newest max_count, or those
 *    younger than the window — so one outage gives exactly the runs the policy promises, whichever
 *    component was down. Kept runs become catch_up runs due at once; dropped jobs are recorded
 *    SKIPPED; dropped occurrences that had no job are counted in misfires_skipped.
 * 2. Ahead. Occurrences after the cursor are generated up to the lookahead (and at least
 *    minAhead future ones), jittered, each with misfire_after = max(fire time, now) + tolerance.
 * 3. The cursor, next fire time and next generation time are saved with the jobs, so a restart
 *    of any component resumes exactly here: a schedule never silently stops.
 *
 * A paused or deleted schedule generates nothing; its late runs are skipped.
 */
export async function generateOccurrences(
  tx: PoolClient,
  deps: GenerationDeps,
  locked: Schedule,
  nowMs: number,
): Promise<GenerationResult> {
  const now = new Date(nowMs);
  const late = await lockLateRuns(tx, locked.id, now);
  if (locked.state !== 'ACTIVE') {
    const skipped = await skipRuns(
      tx,
      late.map((r) => r.id),
      `misfire: the schedule is ${locked.state.toLowerCase()}`,
    );
    const schedule =
      locked.generateAt === null
        ? locked
        : await saveSchedule(tx, { ...locked, generateAt: null, updatedAt: now });
    await countSkippedRuns(tx, [{ scheduleId: locked.id, misfired: skipped.length, skipped: 0 }]);
    return { schedule, created: [], released: 0, skipped: skipped.length, dropped: 0 };
  }
  const { settings } = deps;
  const offset = jitterOffsetMs(locked.tenantId, locked.id, locked.jitterMs);
  const tolerance = locked.misfireToleranceMs;
  // Work in instants: an occurrence fires at instant + offset, so "fire time < now − tolerance"
  // is "instant < (now − offset) − tolerance".
  const shifted = nowMs - offset;
  const missedUntil = shifted - tolerance - 1;
  let cursor = cursorOf(locked);
  let prevFire = locked.lastFireAt?.getTime() ?? null;
  const runs: { row: NewJobRow; nominal: string | null }[] = [];

  // 1. Late runs and missed occurrences.
  const [first] = occurrencesAfter(locked, cursor, missedUntil + 1);
  let newMissed: Occurrence[] = [];
  let dropped = 0;
  if (first) {
    const plan = planMisfires(locked, cursor, shifted, locked.misfire, { toleranceMs: tolerance });
    newMissed = plan.fire.filter((o) => o.instant <= missedUntil);
    dropped = plan.skipped.count;
    const newest = newestOccurrences(locked, cursor, missedUntil, 1)[0];
    if (newest) cursor = position(newest);
  }
  // Decided only when something new missed its time: a run left by the dispatcher, or an
  // occurrence never generated. Catch-up runs chosen before and not dispatched yet join the
  // decision then (a newer miss may supersede them), and are otherwise left alone.
  type Missed = { fireAt: number } & ({ job: (typeof late)[number] } | { occurrence: Occurrence });
  const undecided = late.some((r) => r.misfireAfter !== null && r.misfireAfter.getTime() < nowMs);
  const missed: Missed[] =
    undecided || first
      ? [
          ...late.map((job) => ({ fireAt: job.dueAt.getTime(), job })),
          ...newMissed.map((occurrence) => ({ fireAt: occurrence.instant + offset, occurrence })),
        ]
      : [];
  const oldestMissed = Math.min(
    ...missed.map((m) => ('job' in m ? m.job.occurrenceAt.getTime() : m.occurrence.instant)),
  );
  const alreadyRun = missed.length > 0 ? await dispatchedCatchUps(tx, locked.id, new Date(oldestMissed)) : 0;
  const { run, drop } = selectMissedRuns(locked.misfire, missed, nowMs, alreadyRun);
  const reason = `misfire: missed by more than ${tolerance} ms; policy ${locked.misfire.kind}`;
  const skipped = await skipRuns(
    tx,
    drop.flatMap((m) => ('job' in m ? [m.job.id] : [])),
    reason,
  );
  dropped += drop.filter((m) => 'occurrence' in m).length;
  // Under `within`, a catch-up must be dispatched while younger than the window: past it, it comes
  // back to the decision like any late run (and is dropped).
  const window = locked.misfire.kind === 'within' ? locked.misfire.windowMs : null;
  const released = await releaseLateRuns(
    tx,
    run.flatMap((m) => ('job' in m && m.job.kind !== 'catch_up' ? [m.job.id] : [])),
    window,
  );
  for (const m of run) {
    if (!('occurrence' in m)) continue;
    const o = m.occurrence;
    const fireAt = jitteredFireAt(o.instant, offset, prevFire);
    prevFire = fireAt;
    runs.push({
      nominal: o.nominal,
      row: occurrenceJobRow(locked, {
        occurrenceId: occurrenceId(locked.id, o.nominal, o.instantIndex),
        occurrenceAt: o.instant,
        kind: 'catch_up',
        dueAt: fireAt,
        misfireAfter: window === null ? null : fireAt + window,
      }),
    });
  }

  // 2. Ahead: up to the lookahead, and at least minAhead future occurrences.
  let future = 0;
  let last: Occurrence | undefined;
  let next: Occurrence | undefined;
  let generated = 0;
  for (const o of occurrencesAfter(locked, cursor)) {
    const fireAt = jitteredFireAt(o.instant, offset, prevFire);
    if (
      generated >= settings.maxPerPass ||
      (fireAt > nowMs + settings.lookaheadMs && future >= settings.minAhead)
    ) {
      next = o;
      break;
    }
    prevFire = fireAt;
    if (fireAt > nowMs) future++;
    generated++;
    last = o;
    runs.push({
      nominal: o.nominal,
      row: occurrenceJobRow(locked, {
        occurrenceId: occurrenceId(locked.id, o.nominal, o.instantIndex),
        occurrenceAt: o.instant,
        kind: 'regular',
        dueAt: fireAt,
        // Late from when it could first be dispatched: an occurrence generated on time but
        // already due (within the tolerance) still gets the whole tolerance to be dispatched.
        misfireAfter: Math.max(fireAt, nowMs) + tolerance,
      }),
    });
  }
  if (last) cursor = position(last);

  const created = await createRuns(tx, deps, locked, runs, now);
  const events: OutboxRow[] = [];
  for (const job of released) {
    events.push(await jobEventOutboxRow(deps.codec, deps.jobEventsTopic, 'SCHEDULED', job, now, null));
  }
  await writeOutbox(tx, events);

  // 3. Where the next pass starts, and when it is needed: when the next occurrence enters the
  // lookahead, or when fewer than minAhead generated ones remain ahead.
  const nextFireAt = next ? next.instant : null;
  let generateAt: number | null = nextFireAt === null ? null : nextFireAt + offset - settings.lookaheadMs;
  if (generated >= settings.maxPerPass) generateAt = nowMs;
  else if (nextFireAt !== null && settings.minAhead > 0) {
    const newest = await newestOccurrenceInstants(tx, locked.id, settings.minAhead);
    const oldest = newest.at(-1);
    if (newest.length === settings.minAhead && oldest) {
      generateAt = Math.min(generateAt ?? Infinity, oldest.getTime() + offset);
    }
  }
  const schedule = await saveSchedule(tx, {
    ...locked,
    cursor: storedCursor(cursor),
    lastFireAt: prevFire === null ? null : new Date(prevFire),
    nextFireAt: nextFireAt === null ? null : new Date(nextFireAt),
    generateAt: generateAt === null ? null : new Date(Math.max(generateAt, nowMs)),
    misfiresSkipped: locked.misfiresSkipped + dropped,
    updatedAt: locked.updatedAt,
  });
  await countSkippedRuns(tx, [{ scheduleId: locked.id, misfired: skipped.length, skipped: 0 }]);
  return { schedule, created, released: released.length, skipped: skipped.length, dropped };
}
