import { useLocation } from 'preact-iso';
import { api } from '../api/client.js';
import { TERMINAL_STATES, type Job } from '../api/types.js';
import { paths } from '../paths.js';
import { Confirm } from './confirm.js';
import { RescheduleJob } from './reschedule-job.js';

/** What cancelling does at each stage (the README's staged cancellation). */
const CANCEL_MEANS: Partial<Record<Job['state'], string>> = {
  SCHEDULED: 'It leaves the delay tier and never runs.',
  QUEUED: 'Its task is already queued: the worker that takes it discards it without running it.',
  RUNNING:
    'A worker is running it: the handler’s ctx.signal aborts (JobCancelled) within a heartbeat; what it already did stays done.',
};

function CancelJob({ job, onDone }: { job: Job; onDone: (j: Job) => void }) {
  return (
    <Confirm
      label="Cancel job"
      title="Cancel this job?"
      confirm="Cancel the job"
      dismiss="Keep the job"
      danger
      action={async () => onDone(await api.del<Job>(`/v1/jobs/${encodeURIComponent(job.id)}`))}
    >
      <p>
        {CANCEL_MEANS[job.state]} The job becomes CANCELLED for good; Run again can make a new job from it
        later.
      </p>
    </Confirm>
  );
}

function RerunJob({ job }: { job: Job }) {
  const { route } = useLocation();
  return (
    <Confirm
      label="Run again"
      title="Run this job again?"
      confirm="Run again"
      action={async () => {
        const copy = await api.post<Job>(`/v1/jobs/${encodeURIComponent(job.id)}/rerun`);
        route(paths.job(copy.id));
      }}
    >
      <p>
        A new job is created with the same type, class, payload and retry policy, due now, with a fresh
        attempt budget, no deadline and no idempotency key; this one stays as it is. You are taken to the new
        job.
      </p>
    </Confirm>
  );
}

/**
 * The actions the job's state allows, each confirmed first: cancel while it has not finished,
 * reschedule while it waits, run again once it has finished.
 */
export function JobActions({ job, onDone }: { job: Job; onDone: (j: Job) => void }) {
  const finished = TERMINAL_STATES.has(job.state);
  return (
    <div class="actions job-actions">
      {!finished && <CancelJob job={job} onDone={onDone} />}
      {job.state === 'SCHEDULED' && <RescheduleJob job={job} onDone={onDone} />}
      {finished && <RerunJob job={job} />}
    </div>
  );
}
