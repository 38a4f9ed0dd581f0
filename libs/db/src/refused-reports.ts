import { LIVE_STATES as LIVE, UNSTARTED } from '@kairos/core';

// SQL fragments of the tracker's report statements (tracking.ts): which reports may touch
// PostgreSQL at all, and the audit of those that may not.

/** Why the tracker refused a report; refused_reports.reason. */
export type RefusalReason =
  | 'job_unknown'
  | 'fence_ahead'
  | 'attempt_finished'
  | 'job_terminal'
  | 'attempt_superseded'
  | 'attempt_started';

/** Refused reports of one statement, counted by reason. */
export type Refusals = Partial<Record<RefusalReason, number>>;

export const LIVE_STATES = `(${LIVE.map((st) => `'${st}'`).join(', ')})`;

/** Audit rows older than this are pruned by the statements that add new ones. */
const KEEP = '7 days';

/** A result its attempt row already holds as is: a redelivery, not a zombie's late write. */
const REPLAY =
  '(a.outcome, a.worker_id, a.finished_at) IS NOT DISTINCT FROM (r.outcome, r.worker_id, r.finished_at)';

/**
 * A worker's claim was refused (GONE) by a Redis that lost the attempt, so it says the attempt
 * never started (UNSTARTED in @kairos/core): true only of the job's current attempt while the job
 * is still QUEUED. Started (RUNNING: its worker's lease was lost with Redis's data) or superseded,
 * the report changes nothing, so the attempt's own result can still be recorded.
 */
const UNSTARTED_CHECK = `WHEN r.failure_class = '${UNSTARTED}' AND (j.state <> 'QUEUED' OR r.fence <> j.fence)
                THEN 'attempt_started'`;

/**
 * CTE `v`: each report of `r` (job_id, fence, ...) with its job's fence, `replay` (results only)
 * and `refused`, why it must change nothing (NULL: it applies). Only the job's current attempt,
 * unfinished, of a live job may change; a start of a superseded attempt is refused too, a result
 * of one is recorded as suppressed (a zombie's) when its row has no outcome. The jobs are locked
 * (lockJobs), so this verdict holds for the rest of the statement.
 */
export const VERDICT = (kind: 'start' | 'result') => `
  v AS (
    SELECT r.*, j.fence AS job_fence, ${kind === 'result' ? REPLAY : 'false'} AS replay,
           CASE WHEN j.id IS NULL THEN 'job_unknown'
                WHEN r.fence > j.fence THEN 'fence_ahead'
                WHEN a.outcome IS NOT NULL THEN 'attempt_finished'
                WHEN j.state NOT IN ${LIVE_STATES} THEN 'job_terminal'
                ${kind === 'start' ? "WHEN r.fence < j.fence THEN 'attempt_superseded'" : UNSTARTED_CHECK}
           END AS refused
    FROM r LEFT JOIN jobs j ON j.id = r.job_id
           LEFT JOIN attempts a ON a.job_id = r.job_id AND a.fence = r.fence
  )`;

/**
 * CTEs `refusals` (the refused reports of `v`, audited; RETURNING reason) and `pruned`. Pruning
 * here keeps the table bounded without a sweeper: up to twice as many expired rows go as
 * refusals come, oldest first, skipping rows a concurrent batch is deleting (no wait on the hot
 * path); a statement without refusals deletes nothing.
 */
export const AUDIT = (kind: 'start' | 'result', outcome: string) => `
  refusals AS (
    INSERT INTO refused_reports (job_id, fence, kind, worker_id, outcome, reason)
    SELECT job_id, fence, '${kind}', worker_id, ${outcome}, refused FROM v WHERE refused IS NOT NULL
    RETURNING reason
  ), pruned AS (
    DELETE FROM refused_reports WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM refused_reports WHERE received_at < now() - interval '${KEEP}'
      ORDER BY received_at LIMIT (SELECT 2 * count(*) FROM refusals) FOR UPDATE SKIP LOCKED))
  )`;

/** The statement's refusals by reason, as one jsonb object (NULL when none): a scalar subquery. */
export const REFUSALS_BY_REASON = `(SELECT jsonb_object_agg(reason, n)
  FROM (SELECT reason, count(*)::int AS n FROM refusals GROUP BY reason) x)`;
