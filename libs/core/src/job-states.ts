import type { JobState } from './job.js';

/** The components that move jobs between states (DESIGN.md section 1). */
export type JobActor = 'api/ingest' | 'delay tier' | 'tracker';

/** One allowed move of a job, who makes it, and the named query in libs/db that does it. */
export interface JobTransition {
  /** `null`: the job is created in `to`. */
  readonly from: JobState | null;
  readonly to: JobState;
  readonly by: JobActor;
  /** The libs/db function that writes it (the SQL transition is named after it). */
  readonly query: string;
  readonly why: string;
}

/**
 * Every state a job can be in and every move between them: one writer per move. A worker never
 * writes a job row; it reports on kairos.task-results and the tracker applies that, fenced by the
 * attempt's fence. Terminal states (SUCCEEDED, FAILED, CANCELLED, EXPIRED, SKIPPED) have no way out.
 */
export const JOB_TRANSITIONS: readonly JobTransition[] = [
  { from: null, to: 'SCHEDULED', by: 'api/ingest', query: 'insertJobs', why: 'created (row + outbox event)' },
  {
    from: null,
    to: 'SCHEDULED',
    by: 'tracker',
    query: 'ScheduleGenerator (insertOccurrences)',
    why: "a schedule's next runs, generated ahead of their time",
  },
  {
    from: 'SCHEDULED',
    to: 'SCHEDULED',
    by: 'api/ingest',
    query: 'rescheduleScheduledJob',
    why: 'rescheduled: new due time, version + 1',
  },
  {
    from: 'SCHEDULED',
    to: 'QUEUED',
    by: 'delay tier',
    query: 'claimJobsAsOwners',
    why: 'due: claimed at its popped version under the partition epoch, produced to its class topic',
  },
  {
    from: 'SCHEDULED',
    to: 'QUEUED',
    by: 'delay tier',
    query: 'markQueued',
    why: 'due, in PostgreSQL-only mode (Redis out of memory): locked, produced, marked in one transaction',
  },
  {
    from: 'SCHEDULED',
    to: 'EXPIRED',
    by: 'delay tier',
    query: 'expireJobs',
    why: 'its deadline passed (Redis time) before it could be dispatched',
  },
  {
    from: 'SCHEDULED',
    to: 'SKIPPED',
    by: 'delay tier',
    query: 'OccurrenceGate.apply',
    why: "a schedule's run that its overlap policy skips",
  },
  {
    from: 'SCHEDULED',
    to: 'SKIPPED',
    by: 'tracker',
    query: 'ScheduleGenerator (misfire)',
    why: "a schedule's run that missed its time and its misfire policy drops",
  },
  {
    from: 'QUEUED',
    to: 'RUNNING',
    by: 'tracker',
    query: 'recordStarts',
    why: 'a worker claimed its lease and started it (its STARTED report)',
  },
  ...(['QUEUED', 'RUNNING'] as const).flatMap((from): JobTransition[] => [
    { from, to: 'SUCCEEDED', by: 'tracker', query: 'recordResults', why: 'its current attempt succeeded' },
    {
      from,
      to: 'SCHEDULED',
      by: 'tracker',
      query: 'retryJobs',
      why: 'its current attempt failed (or its lease expired) and attempts remain: fence + 1 after backoff',
    },
    {
      from,
      to: 'FAILED',
      by: 'tracker',
      query: 'failJobs',
      why: 'failed permanently or on its last attempt: dead-lettered in the same transaction',
    },
  ]),
  ...(['SCHEDULED', 'QUEUED', 'RUNNING'] as const).map((from): JobTransition => ({
    from,
    to: 'CANCELLED',
    by: 'api/ingest',
    query: 'cancelUnfinishedJob',
    why: 'cancelled: never dispatched / discarded by the worker / aborted through ctx.signal',
  })),
  ...(['QUEUED', 'RUNNING'] as const).map((from): JobTransition => ({
    from,
    to: 'CANCELLED',
    by: 'delay tier',
    query: 'OccurrenceGate.apply',
    why: "a schedule's previous run, cancelled for the next one (overlap cancel_previous)",
  })),
];

/** States a job can still leave (not terminal). */
export const LIVE_STATES: readonly JobState[] = ['SCHEDULED', 'QUEUED', 'RUNNING'];

/** Whether `by` may move a job from `from` to `to`. */
export function canTransition(from: JobState | null, to: JobState, by?: JobActor): boolean {
  return JOB_TRANSITIONS.some((t) => t.from === from && t.to === to && (by === undefined || t.by === by));
}
