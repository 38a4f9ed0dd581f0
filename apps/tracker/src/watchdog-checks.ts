import { jobEventOutboxRow, lostAttemptResult } from '@kairos/commands';
import type { Job } from '@kairos/core';
import {
  findJobs,
  idleLiveJobs,
  inTransaction,
  nudgeSchedules,
  overdueScheduledJobs,
  partitionOwner,
  stalledSchedules,
  writeOutbox,
  type Pool,
} from '@kairos/db';
import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import type { Logger, WatchMetrics, WatchdogFinding } from '@kairos/observability';
import type { HotSet, Leases } from '@kairos/redis';
import { SCHEMAS } from '@kairos/schemas';
import type { Producer } from 'kafkajs';

/** What every check reads and writes through. */
export interface CheckDeps {
  readonly pool: Pool;
  readonly hot: HotSet;
  readonly leases: Leases;
  readonly codec: AvroCodec;
  readonly topics: Pick<TopicNames, 'jobEvents' | 'taskResults'>;
  /** Sends lost attempts' results; none: they are found and reported, not repaired. */
  readonly producer: Producer | undefined;
  readonly shards: number;
  readonly metrics: WatchMetrics;
  readonly log: Logger;
  readonly graceMs: number;
  readonly queuedTimeoutMs: number;
  readonly runningTimeoutMs: number;
  /** Most jobs (or schedules) looked at per check per round. */
  readonly batch: number;
}

/** Ids to log with a finding: enough to look up, never a flood. */
const SAMPLE = 10;

function byShard(jobs: readonly Job[]): Map<number, Job[]> {
  const m = new Map<number, Job[]>();
  for (const j of jobs) (m.get(j.shard) ?? m.set(j.shard, []).get(j.shard))?.push(j);
  return m;
}

/** Jobs among `jobs` for which `has` (per shard, one Redis read) says false. */
async function missing(
  jobs: readonly Job[],
  has: (shard: number, ids: readonly string[]) => Promise<boolean[]>,
): Promise<Job[]> {
  const out: Job[] = [];
  for (const [shard, group] of byShard(jobs)) {
    const held = await has(
      shard,
      group.map((j) => j.id),
    );
    group.forEach((j, i) => {
      if (!held[i]) out.push(j);
    });
  }
  return out;
}

function report(
  d: CheckDeps,
  kind: WatchdogFinding,
  found: readonly { id: string }[],
  message: string,
): void {
  if (found.length === 0) return;
  d.metrics.findings.inc({ kind }, found.length);
  d.log.error({ kind, count: found.length, sample: found.slice(0, SAMPLE).map((j) => j.id) }, message);
}

/**
 * SCHEDULED jobs past due + grace that no hot set holds (waiting or in flight): Redis lost their
 * entries while the partition's epoch stayed, so no rebuild brings them back and no one would
 * dispatch them. Each is re-entered through its partition's owner: a JobReentered event on
 * kairos.job-events, applied under the owner's epoch, added only if still absent, and dispatched
 * only if PostgreSQL still has it SCHEDULED at that version: idempotent and epoch-fenced.
 * `recent`: jobs re-entered lately (not sent again until their event had time to arrive).
 */
export async function reenterLostJobs(
  d: CheckDeps,
  recent: Map<string, number>,
  nowMs: number,
): Promise<number> {
  const overdue = await overdueScheduledJobs(d.pool, d.shards, d.graceMs, d.batch);
  const absent = await missing(
    overdue.filter((j) => (recent.get(j.id) ?? 0) <= nowMs),
    (shard, ids) => d.hot.holds(shard, ids),
  );
  if (absent.length === 0) return 0;
  // Read again: a job dispatched between the two reads left the hot set legitimately.
  const still = (
    await findJobs(
      d.pool,
      absent.map((j) => j.id),
    )
  ).filter((j) => {
    const before = absent.find((a) => a.id === j.id);
    return j.state === 'SCHEDULED' && j.version === before?.version;
  });
  report(
    d,
    'lost_scheduled',
    still,
    'watchdog: SCHEDULED jobs past due that no hot set holds; re-entering them',
  );
  if (still.length === 0) return 0;
  const now = new Date(nowMs);
  const rows = await Promise.all(
    still.map((j) =>
      jobEventOutboxRow(d.codec, d.topics.jobEvents, 'SCHEDULED', j, now, null, { reentry: true }),
    ),
  );
  await inTransaction(d.pool, (tx) => writeOutbox(tx, rows));
  for (const j of still) recent.set(j.id, nowMs + d.graceMs);
  d.metrics.repairs.inc({ kind: 'lost_scheduled' }, still.length);
  return still.length;
}

/**
 * QUEUED jobs no worker started within the timeout: reported, not repaired. Sending the task
 * again would only add a duplicate behind the first; the cause (no worker of the class, a
 * consumer far behind) is what the canary and the consumer lag show.
 */
export async function findStuckQueued(d: CheckDeps, reported: Set<string>): Promise<number> {
  const stuck = await idleLiveJobs(d.pool, 'QUEUED', d.queuedTimeoutMs, d.batch);
  const fresh = stuck.filter((j) => !reported.has(`${j.id}:${j.fence}`));
  for (const j of fresh) reported.add(`${j.id}:${j.fence}`);
  report(d, 'stuck_queued', fresh, 'watchdog: QUEUED jobs no worker started within the timeout');
  return fresh.length;
}

/**
 * RUNNING jobs older than the timeout whose lease Redis no longer holds (lost with its keys), so
 * the reaper will never see it expire. Each gets the reaper's verdict: a failed, ambiguous
 * result on kairos.task-results for its fence, under the partition's current epoch; the tracker
 * applies it only if that attempt is still the job's current one.
 */
export async function failLeaselessRunning(d: CheckDeps, nowMs: number): Promise<number> {
  const running = await idleLiveJobs(d.pool, 'RUNNING', d.runningTimeoutMs, d.batch);
  const lost = await missing(running, (shard, ids) => d.leases.held(shard, ids));
  report(d, 'running_without_lease', lost, 'watchdog: RUNNING jobs without a lease; failing their attempts');
  if (lost.length === 0 || !d.producer) return 0;
  const messages = [];
  for (const j of lost) {
    const epoch = (await partitionOwner(d.pool, j.shard))?.epoch ?? 0;
    const result = lostAttemptResult(
      j,
      epoch,
      'unknown',
      `lease lost: attempt ${j.attempt} has no lease`,
      nowMs,
    );
    messages.push({
      key: j.id,
      value: await d.codec.encode(d.topics.taskResults, SCHEMAS.taskResult, result),
      // In the job's trace, as a worker's result would be.
      ...(j.traceparent && { headers: { [HEADERS.traceparent]: j.traceparent } }),
    });
  }
  await d.producer.send({ topic: d.topics.taskResults, acks: -1, messages });
  d.metrics.repairs.inc({ kind: 'running_without_lease' }, lost.length);
  return lost.length;
}

/** Active schedules whose next run is overdue and that the generator will not look at: nudged. */
export async function nudgeStalledSchedules(d: CheckDeps): Promise<number> {
  const stalled = await stalledSchedules(d.pool, d.graceMs, d.batch);
  report(d, 'schedule_not_generated', stalled, 'watchdog: schedules whose next run was not generated');
  const n = await nudgeSchedules(
    d.pool,
    stalled.map((s) => s.id),
    d.graceMs,
  );
  if (n > 0) d.metrics.repairs.inc({ kind: 'schedule_not_generated' }, n);
  return n;
}
