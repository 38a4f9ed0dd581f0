/**
 * This worker's attempt was superseded: its lease expired (a pause, a partition) and the job runs
 * elsewhere with a higher fence. Whatever it commits now is suppressed; it must stop.
 */
export class ZombieWriteSuppressed extends Error {
  override readonly name = 'ZombieWriteSuppressed';
  readonly jobId: string;
  readonly fence: number;

  constructor(jobId: string, fence: number, how: string) {
    super(`attempt ${jobId}/${fence} was superseded (${how}): this worker is a zombie for it`);
    this.jobId = jobId;
    this.fence = fence;
  }
}

/** The job was cancelled (or rescheduled) after this attempt was dispatched. */
export class JobCancelled extends Error {
  override readonly name = 'JobCancelled';
  readonly jobId: string;

  constructor(jobId: string) {
    super(`job ${jobId} was cancelled or rescheduled while its attempt was queued or running`);
    this.jobId = jobId;
  }
}
