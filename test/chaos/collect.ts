import { CANARY_TENANT } from '@kairos/core';
import { topicNames } from '@kairos/kafka';
import type { ProcessDeployment } from '@kairos/ops';
import type { Namespace } from '../support/namespace.js';
import { RESOURCE_CLASSES } from '../support/pipeline.js';
import { readAllDecoded } from '../support/topics.js';
import { CHAOS_SERVICES } from './chaos-deployment.js';
import type { Canary, Dispatch, Effect, Start } from './history.js';

/** A timestamp-millis as avsc decodes it without logical types (a number), or a Date. */
const ms = (v: unknown): number => (v instanceof Date ? v.getTime() : Number(v));

export interface Recorded {
  readonly states: Map<string, string>;
  /** When each SUCCEEDED or FAILED job finished, ms. */
  readonly finishedMs: Map<string, number>;
  readonly shards: Map<string, number>;
  readonly dispatches: Dispatch[];
  readonly starts: Start[];
  readonly effects: Effect[];
  readonly canaries: Canary[];
}

/** Reads what the system wrote: PostgreSQL (jobs, effects, canaries) and the task and result topics. */
export async function collect(ns: Namespace, d: ProcessDeployment): Promise<Recorded> {
  const jobs = await d.pool.query<{ id: string; state: string; shard: number; finished_at: Date | null }>(
    'SELECT id, state, shard, finished_at FROM jobs WHERE tenant_id = $1',
    ['acme'],
  );
  const effects = await d.pool.query<{ job_id: string; fence: string; at: Date }>(
    'SELECT job_id, fence, at FROM chaos_effects',
  );
  const canaries = await d.pool.query<{
    resource_class: string;
    created_at: Date;
    state: string;
    finished_at: Date | null;
  }>('SELECT resource_class, created_at, state, finished_at FROM jobs WHERE tenant_id = $1', [CANARY_TENANT]);
  const topics = topicNames(ns.prefix);
  const dispatches: Dispatch[] = [];
  const taskTopics = RESOURCE_CLASSES.flatMap((rc) => [
    topics.tasks(rc),
    ...CHAOS_SERVICES.map((s) => topics.serviceTasks(rc, s.service)),
  ]);
  for (const topic of taskTopics) {
    for (const m of await readAllDecoded(ns, topic)) {
      const v = m.value as Record<string, unknown>;
      dispatches.push({
        jobId: String(v.job_id),
        fence: Number(v.fence),
        dueMs: ms(v.due_at),
        dispatchedMs: ms(v.dispatched_at),
      });
    }
  }
  const starts: Start[] = [];
  for (const m of await readAllDecoded(ns, topics.taskResults)) {
    const v = m.value as Record<string, unknown>;
    if (v.outcome !== 'STARTED') continue;
    starts.push({
      jobId: String(v.job_id),
      fence: Number(v.fence),
      dueMs: ms(v.due_at),
      startedMs: ms(v.started_at),
    });
  }
  return {
    states: new Map(jobs.rows.map((r) => [r.id, r.state])),
    finishedMs: new Map(
      jobs.rows.flatMap((r) =>
        r.finished_at && (r.state === 'SUCCEEDED' || r.state === 'FAILED')
          ? [[r.id, r.finished_at.getTime()] as const]
          : [],
      ),
    ),
    shards: new Map(jobs.rows.map((r) => [r.id, r.shard])),
    dispatches,
    starts,
    effects: effects.rows.map((r) => ({ jobId: r.job_id, fence: Number(r.fence), atMs: r.at.getTime() })),
    canaries: canaries.rows.map((r) => ({
      resourceClass: r.resource_class,
      createdMs: r.created_at.getTime(),
      state: r.state,
      ...(r.finished_at ? { finishedMs: r.finished_at.getTime() } : {}),
    })),
  };
}

/**
 * Every terminal job of the load as PostgreSQL holds it now: state, attempt, fence and its attempt
 * rows (fence, outcome, worker, error class, finish time), one string per job, so two snapshots
 * compare by equality.
 */
export async function terminalSnapshot(d: ProcessDeployment): Promise<Map<string, string>> {
  const { rows } = await d.pool.query<{ id: string; row: string }>(
    `SELECT j.id, concat_ws('|', j.state, j.attempt, j.fence,
              string_agg(concat_ws(':', a.fence, a.outcome, a.worker_id, a.error_class,
                                   extract(epoch FROM a.finished_at)), ',' ORDER BY a.fence)) AS row
       FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id
      WHERE j.tenant_id = 'acme' AND j.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'SKIPPED')
      GROUP BY j.id, j.state, j.attempt, j.fence`,
  );
  return new Map(rows.map((r) => [r.id, r.row]));
}
