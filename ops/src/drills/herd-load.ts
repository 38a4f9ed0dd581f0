import type { DrillContext } from './context.js';

/** The herd's resource class: apart from the batch flood (`default`) and the `critical` stream. */
export const HERD_CLASS = 'io';
/** Requests in flight while creating schedules or batch jobs. */
const PARALLEL = 4;
/** Jobs per batch request (the API's limit). */
const BATCH = 1000;

/** A row of one job with the times the drill judges: due, dispatched, started (by the worker), finished. */
export interface TimedRow {
  readonly id: string;
  readonly state: string;
  readonly dueAtMs: number;
  readonly dispatchedAtMs: number | undefined;
  readonly startedAtMs: number | undefined;
  readonly finishedAtMs: number | undefined;
  readonly attempt: number;
}

async function post(ctx: DrillContext, path: string, body: unknown, want: number): Promise<unknown> {
  const res = await fetch(`${ctx.deployment.apiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ctx.deployment.apiKey}` },
    body: JSON.stringify(body),
  });
  if (res.status !== want) throw new Error(`POST ${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Runs `task(i)` for i in [0, n), `PARALLEL` at a time; results in order. */
async function inParallel<T>(n: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < n; i = next++) out[i] = await task(i);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, n) }, lane));
  return out;
}

/** `n` daily schedules of one cron (UTC) on the herd's class, each moved by its hash jitter in ±`jitterMs`. */
export function createSchedules(
  ctx: DrillContext,
  n: number,
  cron: string,
  jitterMs: number,
): Promise<string[]> {
  return inParallel(n, async (i) => {
    const body = {
      tenant: 'drill',
      cron,
      time_zone: 'UTC',
      job: { type: 'drill.effect', resource_class: HERD_CLASS, payload: { herd: i } },
      jitter_ms: jitterMs,
    };
    return ((await post(ctx, '/v1/schedules', body, 201)) as { id: string }).id;
  });
}

/** `n` batch jobs (class `default`) all due at `dueAtMs`; returns their ids. */
export async function createFlood(ctx: DrillContext, n: number, dueAtMs: number): Promise<string[]> {
  const due = new Date(dueAtMs).toISOString();
  const chunks = await inParallel(Math.ceil(n / BATCH), async (c) => {
    const jobs = Array.from({ length: Math.min(BATCH, n - c * BATCH) }, (_, i) => ({
      tenant: 'drill',
      type: 'drill.effect',
      resource_class: 'default',
      payload: { batch: c * BATCH + i },
      due_at: due,
    }));
    const res = (await post(ctx, '/v1/jobs:batch', { jobs }, 201)) as { jobs: { id: string }[] };
    ctx.progress.update((c + 1) * BATCH, n);
    return res.jobs.map((j) => j.id);
  });
  return chunks.flat();
}

/**
 * Critical jobs arriving all along: every second, the jobs of one second `leadMs` ahead, one per
 * `everyMs` (created shortly before due, as live traffic is). Stop it to get their ids.
 */
export function criticalStream(ctx: DrillContext, everyMs: number, leadMs: number) {
  const ids: string[] = [];
  let running = true;
  let next = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
  const loop = (async () => {
    while (running) {
      const jobs = Array.from({ length: Math.floor(1000 / everyMs) }, (_, i) => ({
        tenant: 'drill',
        type: 'drill.effect',
        resource_class: 'critical',
        payload: { critical: ids.length + i },
        due_at: new Date(next + i * everyMs).toISOString(),
      }));
      ids.push(...(await ctx.createJobs(jobs)));
      next += 1000;
      await new Promise((r) => setTimeout(r, Math.max(0, next - leadMs - Date.now())));
    }
  })();
  return {
    ids,
    async stop(): Promise<string[]> {
      running = false;
      await loop;
      return ids;
    },
  };
}

type Row = {
  id: string;
  state: string;
  due_at: Date;
  dispatched_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  attempt: number;
};
const timed = (r: Row): TimedRow => ({
  id: r.id,
  state: r.state,
  dueAtMs: r.due_at.getTime(),
  dispatchedAtMs: r.dispatched_at?.getTime(),
  startedAtMs: r.started_at?.getTime(),
  finishedAtMs: r.finished_at?.getTime(),
  attempt: r.attempt,
});
const COLUMNS = 'id, state, due_at, dispatched_at, started_at, finished_at, attempt';

/** The jobs of `ids` with their times. */
export async function timedRows(ctx: DrillContext, ids: readonly string[]): Promise<TimedRow[]> {
  const { rows } = await ctx.deployment.pool.query<Row>(
    `SELECT ${COLUMNS} FROM jobs WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows.map(timed);
}

/** The runs of `schedules` for their occurrence at `midnightMs` (regular and any catch-up). */
export async function herdRows(
  ctx: DrillContext,
  schedules: readonly string[],
  midnightMs: number,
): Promise<TimedRow[]> {
  const { rows } = await ctx.deployment.pool.query<Row>(
    `SELECT ${COLUMNS} FROM jobs WHERE schedule_id = ANY($1::uuid[]) AND occurrence_at = $2`,
    [schedules, new Date(midnightMs)],
  );
  return rows.map(timed);
}

/** How many jobs of `resourceClass` in the namespace are not finished yet (a count, not a list: 100,000 ids per poll would load the database more than the drill does). */
export async function unfinishedOfClass(ctx: DrillContext, resourceClass: string): Promise<number> {
  const { rows } = await ctx.deployment.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE resource_class = $1 AND state IN ('SCHEDULED','QUEUED','RUNNING')`,
    [resourceClass],
  );
  return rows[0]?.n ?? 0;
}

/** How many runs of `schedules` for their occurrence at `midnightMs` have been dispatched. */
export async function herdDispatched(
  ctx: DrillContext,
  schedules: readonly string[],
  midnightMs: number,
): Promise<number> {
  const { rows } = await ctx.deployment.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE schedule_id = ANY($1::uuid[]) AND occurrence_at = $2 AND dispatched_at IS NOT NULL`,
    [schedules, new Date(midnightMs)],
  );
  return rows[0]?.n ?? 0;
}
