import { KairosError, occurrenceId, type Schedule, type ScheduleSpec } from '@kairos/core';
import {
  cancelScheduledRuns,
  findOccurrenceJob,
  lastOccurrenceFireAt,
  saveSchedule,
  type PoolClient,
} from '@kairos/db';
import { newId } from './ids.js';
import {
  createRuns,
  generateOccurrences,
  occurrenceJobRow,
  type GenerationDeps,
} from './schedule-generation.js';
import { cancelAhead, cancelEvents } from './schedule-steps.js';
import type { ScheduleChangeResult } from './schedule-types.js';

/**
 * The changes of an existing schedule, each inside the caller's transaction, on input validated
 * before it opened and the schedule's row locked by the caller (ScheduleCommands.change), at `now`.
 */

export interface ChangeDeps {
  readonly gen: GenerationDeps;
  /** Stored with the schedule at every update. */
  readonly misfireToleranceMs: number;
}

/** A new version with new rules: the runs ahead are cancelled and generated anew from now. */
export async function updateIn(
  deps: ChangeDeps,
  tx: PoolClient,
  s: Schedule,
  spec: ScheduleSpec,
  expectedVersion: number | undefined,
  now: Date,
): Promise<Schedule> {
  if (expectedVersion !== undefined && s.version !== expectedVersion) {
    throw new KairosError(
      'CONFLICT',
      `schedule ${s.id} is at version ${s.version}, not ${expectedVersion}; read it again and retry`,
    );
  }
  const version = s.version + 1;
  const rewound = await cancelAhead(tx, deps.gen, s, now, `superseded by version ${version} of its schedule`);
  const lastFireAt = await lastOccurrenceFireAt(tx, s.id);
  const cursorInstant =
    rewound !== null ? Math.min(rewound, now.getTime()) : Math.max(s.cursor.instant, now.getTime());
  const saved = await saveSchedule(tx, {
    ...s,
    ...spec,
    version,
    misfireToleranceMs: deps.misfireToleranceMs,
    // A new or changed SLA judges runs from now on: the history was under other terms.
    slaSince: spec.slaMs === null ? null : spec.slaMs === s.slaMs ? s.slaSince : now,
    cursor:
      rewound === null && s.cursor.instant >= now.getTime()
        ? s.cursor
        : { instant: cursorInstant, nominal: null },
    lastFireAt,
    generateAt: s.state === 'ACTIVE' ? now : null,
    updatedAt: now,
  });
  if (saved.state !== 'ACTIVE') return saved;
  return (await generateOccurrences(tx, deps.gen, saved, now.getTime())).schedule;
}

/** PAUSED: the runs ahead not dispatched yet are cancelled, generation stops (a paused one is left as is). */
export async function pauseIn(deps: ChangeDeps, tx: PoolClient, s: Schedule, now: Date): Promise<Schedule> {
  if (s.state === 'PAUSED') return s;
  const rewound = await cancelAhead(tx, deps.gen, s, now, 'the schedule was paused');
  return saveSchedule(tx, {
    ...s,
    state: 'PAUSED',
    version: s.version + 1,
    cursor: rewound === null ? s.cursor : { instant: rewound, nominal: null },
    lastFireAt: await lastOccurrenceFireAt(tx, s.id),
    generateAt: null,
    pausedAt: now,
    updatedAt: now,
  });
}

/** ACTIVE again, from now (or, catching up, from where it paused); an active one is left as is. */
export async function resumeIn(
  deps: ChangeDeps,
  tx: PoolClient,
  s: Schedule,
  catchUp: boolean,
  now: Date,
): Promise<Schedule> {
  if (s.state === 'ACTIVE') return s;
  const saved = await saveSchedule(tx, {
    ...s,
    state: 'ACTIVE',
    version: s.version + 1,
    cursor:
      catchUp || s.cursor.instant >= now.getTime() ? s.cursor : { instant: now.getTime(), nominal: null },
    generateAt: now,
    pausedAt: null,
    // Runs that fired while paused are not judged against the SLA.
    slaSince: s.slaMs === null ? null : now,
    updatedAt: now,
  });
  return (await generateOccurrences(tx, deps.gen, saved, now.getTime())).schedule;
}

/** DELETED: every run not dispatched yet is cancelled, manual ones included (a deleted one is left as is). */
export async function deleteIn(
  deps: ChangeDeps,
  tx: PoolClient,
  s: Schedule,
  now: Date,
  traceparent: string | null,
): Promise<Schedule> {
  if (s.state === 'DELETED') return s;
  const cancelled = await cancelScheduledRuns(
    tx,
    s.id,
    ['regular', 'catch_up', 'trigger', 'backfill'],
    null,
    'the schedule was deleted',
  );
  await cancelEvents(tx, deps.gen, cancelled, now, traceparent);
  return saveSchedule(tx, {
    ...s,
    state: 'DELETED',
    version: s.version + 1,
    generateAt: null,
    nextFireAt: null,
    deletedAt: now,
    updatedAt: now,
  });
}

/** One extra run now, its occurrence id from `key` (the same key: the same run, created once). */
export async function triggerIn(
  deps: ChangeDeps,
  tx: PoolClient,
  s: Schedule,
  key: string | null,
  now: Date,
  traceparent: string | null,
): Promise<ScheduleChangeResult> {
  const occurrence = occurrenceId(s.id, `trigger ${key ?? newId()}`);
  const existing = await findOccurrenceJob(tx, s.id, occurrence);
  if (existing) return { schedule: s, job: existing, applied: false };
  const row = occurrenceJobRow(s, {
    occurrenceId: occurrence,
    occurrenceAt: now.getTime(),
    kind: 'trigger',
    dueAt: now.getTime(),
    misfireAfter: null,
  });
  const [job] = await createRuns(tx, deps.gen, s, [{ row, nominal: null }], now, traceparent);
  if (!job) throw new Error(`trigger ${occurrence} was neither created nor found`);
  return { schedule: s, job, applied: true };
}
