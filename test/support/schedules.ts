import type pg from 'pg';
import type { Pipeline } from './pipeline.js';

/** A JSON answer whose shape the assertions check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = Record<string, any>;

export interface Problem {
  readonly code: string;
  readonly errors?: { field: string; message: string }[];
}

export interface ScheduleView extends Loose {
  readonly id: string;
  readonly state: string;
  readonly version: number;
  readonly shard: number;
  readonly paused_at: string | null;
  readonly updated_at: string;
}

export interface RunView extends Loose {
  readonly id: string;
  readonly state: string;
  readonly schedule_id: string | null;
  readonly occurrence: { id: string; at: string; kind: string } | null;
}

/** An HTTP call to the pipeline's API; the JSON answer and status. */
export async function api<T = Loose>(
  p: Pick<Pipeline, 'apiUrl' | 'apiKey'>,
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<{ status: number; type: string; json: T }> {
  const headers = { authorization: `Bearer ${p.apiKey}`, ...extra };
  const res = await fetch(`${p.apiUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', json: (await res.json()) as T };
}

/** Creates a schedule over HTTP (201 expected) and returns its view. */
export async function createSchedule(
  p: Pick<Pipeline, 'apiUrl' | 'apiKey'>,
  spec: Record<string, unknown>,
): Promise<ScheduleView> {
  const r = await api<ScheduleView>(p, 'POST', '/v1/schedules', spec);
  if (r.status !== 201) throw new Error(`create schedule: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** One job of a schedule as PostgreSQL has it (times in ms). */
export interface RunRow {
  readonly id: string;
  readonly state: string;
  readonly kind: string;
  readonly occurrenceId: string;
  readonly occurrenceAt: number;
  readonly dueAt: number;
  readonly dispatchedAt: number | null;
  readonly finishedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly attempt: number;
  readonly lastError: string | null;
}

/** Every job of a schedule, oldest occurrence first. */
export async function runsOf(pool: pg.Pool, scheduleId: string): Promise<RunRow[]> {
  const r = await pool.query<{
    id: string;
    state: string;
    occurrence_kind: string;
    occurrence_id: string;
    occurrence_at: Date;
    due_at: Date;
    dispatched_at: Date | null;
    finished_at: Date | null;
    created_at: Date;
    updated_at: Date;
    attempt: number;
    last_error: string | null;
  }>(
    `SELECT id, state, occurrence_kind, occurrence_id, occurrence_at, due_at, dispatched_at, finished_at,
            created_at, updated_at, attempt, last_error
     FROM jobs WHERE schedule_id = $1 ORDER BY occurrence_at, id`,
    [scheduleId],
  );
  const ms = (d: Date | null) => (d ? d.getTime() : null);
  return r.rows.map((row) => ({
    id: row.id,
    state: row.state,
    kind: row.occurrence_kind,
    occurrenceId: row.occurrence_id,
    occurrenceAt: row.occurrence_at.getTime(),
    dueAt: row.due_at.getTime(),
    dispatchedAt: ms(row.dispatched_at),
    finishedAt: ms(row.finished_at),
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
    attempt: row.attempt,
    lastError: row.last_error,
  }));
}

/** One handler invocation, as the worker saw it. */
export interface Execution {
  readonly jobId: string;
  readonly dueAt: number;
  readonly startedAt: number;
  endedAt: number | null;
  aborted: string | null;
}

/** Records handler invocations per job. */
export class Executions {
  readonly all: Execution[] = [];

  start(jobId: string, dueAt: number): Execution {
    const e: Execution = { jobId, dueAt, startedAt: Date.now(), endedAt: null, aborted: null };
    this.all.push(e);
    return e;
  }

  of(jobIds: ReadonlySet<string>): Execution[] {
    return this.all.filter((e) => jobIds.has(e.jobId));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next whole second after `ms`. */
export const nextSecond = (ms: number) => Math.floor(ms / 1000) * 1000 + 1000;
