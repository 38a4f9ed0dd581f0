import { useState } from 'preact/hooks';
import { api } from '../api/client.js';
import type { Job } from '../api/types.js';
import { Confirm } from './confirm.js';
import { fromLocalInput, Time, toLocalInput } from './time.js';

/**
 * Moves a SCHEDULED job to a new due time (`POST /v1/jobs/:id/reschedule`; the API takes no
 * version: it refuses with 409 once the job is dispatched). A deadline before the new time must be
 * cleared, so the dialog offers that.
 */
export function RescheduleJob({ job, onDone }: { job: Job; onDone: (j: Job) => void }) {
  const [due, setDue] = useState(() => toLocalInput(job.due_at).slice(0, 16));
  const [clearDeadline, setClearDeadline] = useState(false);
  const action = async () => {
    if (!due) throw new Error('Choose the new due time.');
    const body = { due_at: fromLocalInput(due), ...(clearDeadline ? { deadline_at: null } : {}) };
    onDone(await api.post<Job>(`/v1/jobs/${encodeURIComponent(job.id)}/reschedule`, body));
  };
  return (
    <Confirm label="Reschedule" title="Reschedule this job" confirm="Reschedule" action={action}>
      <p>
        The job waits until the new due time instead of <Time at={job.due_at} />. Nothing else about it
        changes.
      </p>
      <label for="new-due">
        New due time (your local time)
        <input
          id="new-due"
          name="due_at"
          type="datetime-local"
          required
          value={due}
          onInput={(e) => setDue(e.currentTarget.value)}
        />
      </label>
      {job.deadline_at && (
        <label for="clear-deadline">
          <input
            id="clear-deadline"
            type="checkbox"
            checked={clearDeadline}
            onChange={(e) => setClearDeadline(e.currentTarget.checked)}
          />
          Clear its deadline (<Time at={job.deadline_at} />; kept otherwise, and it must not be before the new
          due time)
        </label>
      )}
    </Confirm>
  );
}
