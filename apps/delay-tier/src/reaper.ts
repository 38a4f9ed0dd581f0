import { lostAttemptResult } from '@kairos/commands';
import { LifecycleService, PollLoop } from '@kairos/core';
import { findJobs, type Pool } from '@kairos/db';
import { HEADERS, type AvroCodec } from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import type { Leases, ReapResult } from '@kairos/redis';
import { SCHEMAS, type TaskResultRecord } from '@kairos/schemas';
import type { Producer } from 'kafkajs';
import type { Ownership } from './ownership.js';
import type { OwnershipGuard } from './ownership-guard.js';
import type { PartitionModes } from './partition-modes.js';

export interface ReaperOptions {
  readonly leases: Leases;
  readonly ownership: Ownership;
  readonly modes: PartitionModes;
  /** STALE_EPOCH and REDIS_OOM policy. */
  readonly guard: OwnershipGuard;
  readonly pool: Pool;
  readonly codec: AvroCodec;
  readonly producer: Producer;
  readonly taskResultsTopic: string;
  readonly log: Logger;
  /**
   * Longest pause between rounds, ms. Workers write their claims straight to Redis, unseen by
   * the tier, and the SDK allows leases down to 100 ms, so a fresh claim's expiry is found at the
   * latest this long after it passed; known leases are reaped right at their expiry.
   */
  readonly intervalMs: number;
  /** Most leases reaped per partition per round. */
  readonly batch: number;
  readonly onReaped?: (jobId: string, fence: number) => void;
}

/** A round comes at most this long after the earliest known lease expiry (timer granularity). */
const REAP_SLACK_MS = 5;

/**
 * The lease reaper: every interval, for each owned partition, takes the running attempts whose
 * lease expired (their worker died or stalled past its lease) and reports each as a failed,
 * ambiguous attempt on kairos.task-results. The tracker then decides as for any failure: the job
 * runs again with a higher fence after its backoff (through PostgreSQL and the delay tier, so no
 * restart loses it), or, out of attempts, fails into its dead-letter topic. The old attempt's
 * worker, should it wake up, is a zombie: its renewals, its release and its result are refused.
 */
export class Reaper extends LifecycleService {
  readonly #o: ReaperOptions;
  readonly #loop: PollLoop;

  constructor(options: ReaperOptions) {
    super('lease reaper');
    this.#o = options;
    // Rounds never overlap: a slow one delays the next.
    this.#loop = new PollLoop({
      round: () => this.#reapAll(),
      intervalMs: options.intervalMs,
      onError: (err) => options.log.error({ err }, 'reaping round failed'),
    });
  }

  protected onStart(): Promise<void> {
    return this.#loop.start();
  }

  protected onStop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Reaps every partition; returns the pause until the next round (earliest expiry, capped). */
  async #reapAll(): Promise<number> {
    let pauseMs = this.#o.intervalMs;
    for (const partition of this.#o.ownership.dispatchable()) {
      if (this.#o.modes.isFallback(partition)) continue;
      const epoch = this.#o.ownership.heldEpoch(partition);
      if (epoch === undefined) continue;
      try {
        const t0 = performance.now();
        // A stale partition's recovery runs in the background: it must not hold up the others.
        const r = await this.#o.guard.run(partition, epoch, () => this.#reap(partition, epoch));
        if (r.outcome !== 'done') continue;
        const { nowMs, nextExpiryMs } = r.value;
        // Measured from the request: the expiry is on Redis time, read during the call.
        if (nextExpiryMs !== undefined) {
          const left = nextExpiryMs - nowMs - (performance.now() - t0);
          pauseMs = Math.min(pauseMs, Math.max(0, left) + REAP_SLACK_MS);
        }
      } catch (err) {
        this.#o.log.error({ err, partition }, 'reaping leases failed; retrying next round');
      }
    }
    return pauseMs;
  }

  async #reap(
    partition: number,
    epoch: number,
  ): Promise<{ nowMs: number; nextExpiryMs: number | undefined }> {
    const { reaped, nowMs, nextExpiryMs } = await this.#o.leases.reap(partition, epoch, this.#o.batch);
    if (reaped.length > 0) await this.#report(partition, epoch, reaped);
    return { nowMs, nextExpiryMs };
  }

  async #report(partition: number, epoch: number, reaped: ReapResult['reaped']): Promise<void> {
    const jobs = new Map(
      (
        await findJobs(
          this.#o.pool,
          reaped.map((r) => r.jobId),
        )
      ).map((j) => [j.id, j]),
    );
    const now = Date.now();
    const results: TaskResultRecord[] = [];
    for (const r of reaped) {
      const job = jobs.get(r.jobId);
      // The attempt ended meanwhile (its result arrived, or the job was cancelled): nothing to report.
      if (!job || job.fence !== r.fence || !['QUEUED', 'RUNNING'].includes(job.state)) continue;
      results.push(
        lostAttemptResult(
          job,
          epoch,
          r.workerId,
          `lease expired: worker ${r.workerId} stopped renewing attempt ${job.attempt}`,
          now,
        ),
      );
    }
    if (results.length > 0) {
      await this.#o.producer.send({
        topic: this.#o.taskResultsTopic,
        acks: -1,
        messages: await Promise.all(
          results.map(async (r) => {
            const traceparent = jobs.get(r.job_id)?.traceparent;
            return {
              key: r.job_id,
              value: await this.#o.codec.encode(this.#o.taskResultsTopic, SCHEMAS.taskResult, r),
              ...(traceparent && { headers: { [HEADERS.traceparent]: traceparent } }),
            };
          }),
        ),
      });
      for (const r of results) {
        this.#o.log.warn(
          {
            jobId: r.job_id,
            fence: r.fence,
            worker: r.worker_id,
            traceparent: jobs.get(r.job_id)?.traceparent ?? undefined,
          },
          'lease expired: attempt reaped',
        );
        this.#o.onReaped?.(r.job_id, r.fence);
      }
    }
    await this.#o.leases.forget(partition, reaped);
  }
}
