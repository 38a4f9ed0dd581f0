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
  type ScanCursor,
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

/** Where each scan continues next round (null: from its start), so a long list is seen whole over rounds. */
export interface ScanCursors {
  overdue: ScanCursor | null;
  queued: ScanCursor | null;
  running: ScanCursor | null;
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
  has: (shard: number, group: readonly Job[]) => Promise<boolean[]>,
): Promise<Job[]> {
  const out: Job[] = [];
  for (const [shard, group] of byShard(jobs)) {
    const held = await has(shard, group);
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
 * SCHEDULED jobs past due + grace that no hot set holds (waiting or in flight): Redis lost some of
 * their entries while the partition's epoch stayed, so no rebuild brings them back and no one would
 * dispatch them. Each is re-entered through its partition's owner: a JobReentered event on
 * kairos.job-events, applied under the owner's epoch, added only if still absent, and dispatched
 * only if PostgreSQL still has it SCHEDULED at that version: idempotent and epoch-fenced.
 * `recent`: jobs re-entered lately (not sent again until their event had time to arrive).
 */
export async function reenterLostJobs(
  d: CheckDeps,
  recent: Map<string, number>,
  nowMs: number,
  cursors: ScanCursors,
): Promise<number> {
  const { jobs: overdue, next } = await overdueScheduledJobs(
    d.pool,
    d.shards,
    d.graceMs,
    d.batch,
    cursors.overdue,
  );
  cursors.overdue = next;
  const absent = await missing(
    overdue.filter((j) => (recent.get(j.id) ?? 0) <= nowMs),
    (shard, group) =>
      d.hot.holds(
        shard,
        group.map((j) => ({ jobId: j.id, resourceClass: j.resourceClass, tenant: j.tenantId })),
      ),
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
export async function findStuckQueued(
  d: CheckDeps,
  reported: Set<string>,
  cursors: ScanCursors,
): Promise<number> {
  const { jobs: stuck, next } = await idleLiveJobs(
    d.pool,
    'QUEUED',
    d.queuedTimeoutMs,
    d.batch,
    cursors.queued,
  );
  cursors.queued = next;
  const fresh = stuck.filter((j) => !reported.has(`${j.id}:${j.fence}`));
  for (const j of fresh) reported.add(`${j.id}:${j.fence}`);
  report(d, 'stuck_queued', fresh, 'watchdog: QUEUED jobs no worker started within the timeout');
  return fresh.length;
}

/**
 * RUNNING jobs older than the timeout whose lease Redis no longer holds, with no sign that the
 * attempt ended (lost with its keys), so the reaper will never see it expire. Each gets the
 * reaper's verdict: a failed, ambiguous result on kairos.task-results for its fence, under the
 * partition's current epoch; the tracker applies it only if that attempt is still the job's
 * current one. Skipped while Redis is full: workers then run attempts unleased on purpose.
 */
export async function failLeaselessRunning(
  d: CheckDeps,
  nowMs: number,
  cursors: ScanCursors,
): Promise<number> {
  const { jobs: running, next } = await idleLiveJobs(
    d.pool,
    'RUNNING',
    d.runningTimeoutMs,
    d.batch,
    cursors.running,
  );
  cursors.running = next;
  if (running.length === 0 || (await d.leases.full())) return 0;
  const lost: { job: Job; workerId: string }[] = [];
  for (const [shard, group] of byShard(running)) {
    const states = await d.leases.attemptStates(
      shard,
      group.map((j) => ({ jobId: j.id, shard, fence: j.fence, version: j.version })),
    );
    group.forEach((job, i) => {
      const st = states[i];
      if (st?.state === 'lost') lost.push({ job, workerId: st.workerId ?? 'unknown' });
    });
  }
  report(
    d,
    'running_without_lease',
    lost.map((l) => l.job),
    'watchdog: RUNNING jobs without a lease; failing their attempts',
  );
  if (lost.length === 0 || !d.producer) return 0;
  const epochs = new Map<number, number>();
  const messages = [];
  for (const { job, workerId } of lost) {
    if (!epochs.has(job.shard)) epochs.set(job.shard, (await partitionOwner(d.pool, job.shard))?.epoch ?? 0);
    const result = lostAttemptResult(
      job,
      epochs.get(job.shard) ?? 0,
      workerId,
      `lease lost: attempt ${job.attempt} has no lease`,
      nowMs,
    );
    messages.push({
      key: job.id,
      value: await d.codec.encode(d.topics.taskResults, SCHEMAS.taskResult, result),
      // In the job's trace, as a worker's result would be.
      ...(job.traceparent && { headers: { [HEADERS.traceparent]: job.traceparent } }),
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
