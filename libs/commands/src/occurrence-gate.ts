import { decideOverlap, nextOverlapState, type Job, type OverlapState } from '@kairos/core';
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
  type PoolClient,
} from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';
import { jobEventOutboxRow } from './events.js';

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
  readonly waiting: number;
  /** Previous runs cancelled by cancel_previous. */
  readonly cancelled: readonly Job[];
}

const NOTHING: GateOutcome = { withheld: new Set(), events: [], skipped: 0, waiting: 0, cancelled: [] };

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
    const runs = await pendingRuns(tx, ids);
    const bySchedule = new Map<string, (typeof runs extends Map<string, infer R> ? R : never)[]>();
    for (const r of runs.values()) {
      const list = bySchedule.get(r.scheduleId) ?? [];
      list.push(r);
      bySchedule.set(r.scheduleId, list);
    }
    const policies = await schedulePolicies(tx, [...bySchedule.keys()]);
    const withheld = new Set<string>();
    const events: OutboxRow[] = [];
    const cancelled: Job[] = [];
    let skipped = 0;
    let waiting = 0;
    const now = new Date(nowMs);
    const needsOthers = [...bySchedule.keys()].filter((s) => {
      const p = policies.get(s);
      return p && p.state !== 'DELETED' && p.overlap !== 'allow';
    });
    const others = await unfinishedRuns(tx, needsOthers, ids);

    for (const [scheduleId, list] of bySchedule) {
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
        gone.forEach((id) => withheld.add(id));
        continue;
      }
      let candidates = firsts;
      if (policy.state === 'PAUSED') {
        const paused = firsts.filter((r) => r.kind === 'regular' || r.kind === 'catch_up');
        const done = await skipRuns(
          tx,
          paused.map((r) => r.id),
          'the schedule is paused',
        );
        done.forEach((id) => withheld.add(id));
        skipped += done.length;
        candidates = firsts.filter((r) => !paused.includes(r));
      }
      if (policy.overlap === 'allow' || candidates.length === 0) continue;

      const mine = others.filter((o) => o.scheduleId === scheduleId);
      const previous = mine.filter((o) => o.state !== 'SCHEDULED' || o.attempt > 1);
      // A retry claimed in this batch continues a run: it is unfinished too.
      let state: OverlapState = {
        running: previous.length > 0 || list.some((r) => r.attempt > 1),
        waiting: false,
      };
      const dispatchedHere: string[] = [];
      for (const run of candidates) {
        const olderWaiting = mine.some(
          (o) =>
            o.state === 'SCHEDULED' &&
            o.attempt === 1 &&
            (o.misfireAfter === null || o.misfireAfter.getTime() >= nowMs) &&
            o.dueAt.getTime() <= nowMs + this.#recheckMs &&
            o.occurrenceAt.getTime() < run.occurrenceAt.getTime(),
        );
        const action = decideOverlap(policy.overlap, { ...state, waiting: state.waiting || olderWaiting });
        switch (action) {
          case 'dispatch':
            dispatchedHere.push(run.id);
            break;
          case 'skip': {
            const reason = `overlap ${policy.overlap}: ${state.running ? 'the previous run is unfinished' : 'another run is already waiting'}`;
            const done = await skipRuns(tx, [run.id], reason);
            done.forEach((id) => withheld.add(id));
            skipped += done.length;
            break;
          }
          case 'wait': {
            const job = await deferRun(tx, run.id, new Date(nowMs + this.#recheckMs));
            withheld.add(run.id);
            if (job) {
              waiting++;
              events.push(await this.#event('SCHEDULED', job, now));
            }
            break;
          }
          case 'cancel_previous': {
            // Runs of this batch dispatched before this one were never produced: superseded.
            const superseded = await skipRuns(
              tx,
              dispatchedHere.splice(0),
              'overlap cancel_previous: superseded',
            );
            superseded.forEach((id) => withheld.add(id));
            skipped += superseded.length;
            for (const p of previous.splice(0)) {
              const job = await cancelUnfinishedJob(tx, p.id);
              if (!job) continue;
              cancelled.push(job);
              events.push(await this.#event('CANCELLED', job, now));
            }
            dispatchedHere.push(run.id);
            break;
          }
        }
        state = nextOverlapState(state, action);
        if (action === 'wait') state = { ...state, waiting: true };
      }
    }
    return { withheld, events, skipped, waiting, cancelled };
  }

  async #event(type: 'SCHEDULED' | 'CANCELLED', job: Job, now: Date): Promise<OutboxRow> {
    return jobEventOutboxRow(this.#o.codec, this.#o.jobEventsTopic, type, job, now, null);
  }
}
