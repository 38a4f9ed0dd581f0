import { KairosError, type Job, type Schedule } from '@kairos/core';
import {
  cancelScheduledRuns,
  deleteOccurrences,
  lockSchedule,
  writeOutbox,
  type PoolClient,
} from '@kairos/db';
import { jobEventOutboxRow } from './events.js';
import type { GenerationDeps } from './schedule-generation.js';

/** The steps the schedule commands share inside their transactions. */

/** Who asks: a tenant scopes every command (another tenant's schedule is NOT_FOUND). */
export interface ScheduleScope {
  readonly tenantId?: string;
}

/** Locks a schedule that exists for the caller (NOT_FOUND otherwise), whatever its state. */
export async function lockOwn(tx: PoolClient, id: string, scope: ScheduleScope): Promise<Schedule> {
  const s = await lockSchedule(tx, id);
  if (!s || (scope.tenantId !== undefined && s.tenantId !== scope.tenantId)) {
    throw new KairosError('NOT_FOUND', `no schedule ${id}`);
  }
  return s;
}

/** Locks a schedule that exists for the caller and is not deleted (CONFLICT when it is). */
export async function lockLive(tx: PoolClient, id: string, scope: ScheduleScope): Promise<Schedule> {
  const s = await lockOwn(tx, id, scope);
  if (s.state === 'DELETED') throw new KairosError('CONFLICT', `schedule ${id} is DELETED`);
  return s;
}

/** Writes a CANCELLED event for each cancelled run (the delay tier drops it). */
export async function cancelEvents(
  tx: PoolClient,
  deps: GenerationDeps,
  jobs: readonly Job[],
  now: Date,
  traceparent: string | null,
): Promise<void> {
  const events = [];
  for (const job of jobs) {
    events.push(await jobEventOutboxRow(deps.codec, deps.jobEventsTopic, 'CANCELLED', job, now, traceparent));
  }
  await writeOutbox(tx, events);
}

/**
 * Cancels the schedule's regular and catch-up runs not dispatched yet and due after `now`, and
 * forgets their occurrences so they can be generated again. Returns the instant just before the
 * first cancelled occurrence (where generation must resume), or null when none was cancelled.
 */
export async function cancelAhead(
  tx: PoolClient,
  deps: GenerationDeps,
  s: Schedule,
  now: Date,
  reason: string,
): Promise<number | null> {
  const cancelled = await cancelScheduledRuns(tx, s.id, ['regular', 'catch_up'], now, reason);
  await deleteOccurrences(
    tx,
    s.id,
    cancelled.flatMap((j) => (j.occurrence ? [j.occurrence.occurrenceId] : [])),
  );
  await cancelEvents(tx, deps, cancelled, now, null);
  const first = cancelled.reduce(
    (m, j) => Math.min(m, j.occurrence?.occurrenceAt.getTime() ?? Infinity),
    Infinity,
  );
  return Number.isFinite(first) ? first - 1 : null;
}
