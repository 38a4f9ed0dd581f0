import { jobEventOutboxRow } from '@kairos/commands';
import {
  decideOverlap,
  nextOverlapState,
  type Job,
  type OverlapPolicy,
  type OverlapState,
} from '@kairos/core';
import {
  cancelClaimedRuns,
  cancelUnfinishedJob,
  deferRun,
  pendingRuns,
  schedulePolicies,
  skipRuns,
  unfinishedRuns,
  type ClaimedJob,
  type OutboxRow,
  type PendingRun,
  type PoolClient,
} from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';

export interface OccurrenceGateOptions {
  readonly codec: AvroCodec;
  readonly jobEventsTopic: string;
  /** A run waiting behind a running one (buffer_one) is looked at again after this, ms. Default: 500. */
  readonly recheckMs?: number;
}

/** What the gate decided for the runs of one claim. */
export interface GateOutcome {
  /** Claimed jobs that must not be produced (skipped, cancelled or put back to wait). */
  readonly withheld: ReadonlySet<string>;
  /** Events to write in the claim's transaction (runs put back to wait, previous runs cancelled). */
  readonly events: readonly OutboxRow[];
  readonly skipped: number;
  /** Runs skipped (overlap policy, pause), per schedule. */
  readonly skippedBy: ReadonlyMap<string, number>;
  readonly waiting: number;
  /** Previous runs cancelled by cancel_previous. */
  readonly cancelled: readonly Job[];
}

const NOTHING: GateOutcome = {
  withheld: new Set(),
  events: [],
  skipped: 0,
  skippedBy: new Map(),
  waiting: 0,
  cancelled: [],
};

type Run = PendingRun & { readonly scheduleId: string };

/** The outcome as one claim's schedules add to it. */
interface Tally {
  readonly withheld: Set<string>;
  readonly events: OutboxRow[];
  readonly cancelled: Job[];
  readonly skippedBy: Map<string, number>;
  skipped: number;
  waiting: number;
}

function countSkipped(tally: Tally, scheduleId: string, n: number): void {
  tally.skipped += n;
  if (n > 0) tally.skippedBy.set(scheduleId, (tally.skippedBy.get(scheduleId) ?? 0) + n);
}

/** Runs of one schedule, in occurrence order, as they are looked at. */
interface ScheduleRuns {
  readonly scheduleId: string;
  readonly overlap: OverlapPolicy;
  /** Every claimed run of the schedule (retries included). */
  readonly claimed: readonly Run[];
  /** First attempts still to decide. */
  readonly candidates: readonly Run[];
  /** The schedule's unfinished runs outside the claim. */
  readonly others: readonly Run[];
}

function bySchedule(runs: Iterable<Run>): Map<string, Run[]> {
  const out = new Map<string, Run[]>();
  for (const r of runs) {
    const list = out.get(r.scheduleId) ?? [];
    list.push(r);
    out.set(r.scheduleId, list);
  }
  return out;
}

/**
 * The overlap policy, applied where it is exact: in the dispatcher's claim transaction, when an
 * occurrence comes due. All occurrences of a schedule route to one partition, whose single owner
 * (epoch-fenced) claims them in order, so "is the previous run still going" is decided once per
 * occurrence, atomically with its dispatch. For each schedule of the claimed runs:
 *
 * - deleted schedule: its claimed first attempts are CANCELLED;
 * - paused schedule: its claimed regular and catch-up runs are SKIPPED (manual runs go on);
 * - overlap, when a previous run is unfinished (QUEUED, RUNNING, or between retries):
 *   allow dispatches; skip records the new run SKIPPED; buffer_one keeps it waiting (SCHEDULED,
 *   looked at again every recheckMs; a second waiter is SKIPPED); cancel_previous cancels the
 *   unfinished runs through the staged cancellation (CANCELLED event: a queued task is discarded,
 *   a running handler aborted within a heartbeat) and dispatches the new one.
 *
 * Retries (attempt > 1) continue their run and are always dispatched.
 */
export class OccurrenceGate {
  readonly #o: OccurrenceGateOptions;
  readonly #recheckMs: number;

  constructor(options: OccurrenceGateOptions) {
    this.#o = options;
    this.#recheckMs = options.recheckMs ?? 500;
  }

  /** Applies the policies to runs claimed in `tx` (claimed but not produced yet). */
  async apply(tx: PoolClient, claimed: readonly ClaimedJob[], nowMs: number): Promise<GateOutcome> {
    const ids = claimed.flatMap((c) => (c.scheduleId ? [c.id] : []));
    if (ids.length === 0) return NOTHING;
    const schedules = bySchedule((await pendingRuns(tx, ids)).values());
    const policies = await schedulePolicies(tx, [...schedules.keys()]);
    const needsOthers = [...schedules.keys()].filter((s) => {
      const p = policies.get(s);
      return p && p.state !== 'DELETED' && p.overlap !== 'allow';
    });
    const others = await unfinishedRuns(tx, needsOthers, ids);
    const tally: Tally = {
      withheld: new Set(),
      events: [],
      cancelled: [],
      skippedBy: new Map(),
      skipped: 0,
      waiting: 0,
    };
    for (const [scheduleId, list] of schedules) {
      const policy = policies.get(scheduleId);
      if (!policy) continue;
      list.sort((a, b) => a.occurrenceAt.getTime() - b.occurrenceAt.getTime() || (a.id < b.id ? -1 : 1));
      const firsts = list.filter((r) => r.attempt === 1);
      if (policy.state === 'DELETED') {
        const gone = await cancelClaimedRuns(
          tx,
          firsts.map((r) => r.id),
          'the schedule was deleted',
        );
        gone.forEach((id) => tally.withheld.add(id));
        continue;
      }
      const candidates =
        policy.state === 'PAUSED' ? await this.#skipPaused(tx, scheduleId, firsts, tally) : firsts;
      if (policy.overlap === 'allow' || candidates.length === 0) continue;
      const mine = others.filter((o) => o.scheduleId === scheduleId);
      await this.#overlap(
        tx,
        { scheduleId, overlap: policy.overlap, claimed: list, candidates, others: mine },
        nowMs,
        tally,
      );
    }
    return tally;
  }

  /** A paused schedule's regular and catch-up runs are SKIPPED; its manual runs go on. */
  async #skipPaused(
    tx: PoolClient,
    scheduleId: string,
    firsts: readonly Run[],
    tally: Tally,
  ): Promise<Run[]> {
    const paused = firsts.filter((r) => r.kind === 'regular' || r.kind === 'catch_up');
    const done = await skipRuns(
      tx,
      paused.map((r) => r.id),
      'the schedule is paused',
    );
    done.forEach((id) => tally.withheld.add(id));
    countSkipped(tally, scheduleId, done.length);
    return firsts.filter((r) => !paused.includes(r));
  }

  /** Decides each candidate run of one schedule under its overlap policy, in occurrence order. */
  async #overlap(tx: PoolClient, runs: ScheduleRuns, nowMs: number, tally: Tally): Promise<void> {
    const previous = runs.others.filter((o) => o.state !== 'SCHEDULED' || o.attempt > 1);
    // A retry claimed in this batch continues a run: it is unfinished too.
    let state: OverlapState = {
      running: previous.length > 0 || runs.claimed.some((r) => r.attempt > 1),
      waiting: false,
    };
    const dispatchedHere: string[] = [];
    for (const run of runs.candidates) {
      const olderWaiting = runs.others.some(
        (o) =>
          o.state === 'SCHEDULED' &&
          o.attempt === 1 &&
          (o.misfireAfter === null || o.misfireAfter.getTime() >= nowMs) &&
          o.dueAt.getTime() <= nowMs + this.#recheckMs &&
          o.occurrenceAt.getTime() < run.occurrenceAt.getTime(),
      );
      const action = decideOverlap(runs.overlap, { ...state, waiting: state.waiting || olderWaiting });
      switch (action) {
        case 'dispatch':
          dispatchedHere.push(run.id);
          break;
        case 'skip': {
          const reason = `overlap ${runs.overlap}: ${state.running ? 'the previous run is unfinished' : 'another run is already waiting'}`;
          const done = await skipRuns(tx, [run.id], reason);
          done.forEach((id) => tally.withheld.add(id));
          countSkipped(tally, runs.scheduleId, done.length);
          break;
        }
        case 'wait':
          await this.#wait(tx, run, nowMs, tally);
          break;
        case 'cancel_previous':
          await this.#cancelPrevious(tx, runs.scheduleId, dispatchedHere, previous, nowMs, tally);
          dispatchedHere.push(run.id);
          break;
      }
      state = nextOverlapState(state, action);
      if (action === 'wait') state = { ...state, waiting: true };
    }
  }

  /** buffer_one: the run waits (SCHEDULED again, looked at after recheckMs). */
  async #wait(tx: PoolClient, run: Run, nowMs: number, tally: Tally): Promise<void> {
    const job = await deferRun(tx, run.id, new Date(nowMs + this.#recheckMs));
    tally.withheld.add(run.id);
    if (!job) return;
    tally.waiting++;
    tally.events.push(await this.#event('SCHEDULED', job, new Date(nowMs)));
  }

  /** cancel_previous: earlier runs of this claim are superseded, unfinished ones cancelled. */
  async #cancelPrevious(
    tx: PoolClient,
    scheduleId: string,
    dispatchedHere: string[],
    previous: Run[],
    nowMs: number,
    tally: Tally,
  ): Promise<void> {
    // Runs of this batch dispatched before this one were never produced: superseded.
    const superseded = await skipRuns(tx, dispatchedHere.splice(0), 'overlap cancel_previous: superseded');
    superseded.forEach((id) => tally.withheld.add(id));
    countSkipped(tally, scheduleId, superseded.length);
    for (const p of previous.splice(0)) {
      const job = await cancelUnfinishedJob(tx, p.id);
      if (!job) continue;
      tally.cancelled.push(job);
      tally.events.push(await this.#event('CANCELLED', job, new Date(nowMs)));
    }
  }

  #event(type: 'SCHEDULED' | 'CANCELLED', job: Job, now: Date): Promise<OutboxRow> {
    return jobEventOutboxRow(this.#o.codec, this.#o.jobEventsTopic, type, job, now, null);
  }
}
