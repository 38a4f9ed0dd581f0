import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.js';
import { TERMINAL_STATES, type AttemptList, type Job } from '../api/types.js';
import { AttemptsTable } from '../components/attempts-table.js';
import { ErrorNote } from '../components/error-note.js';
import { JobActions } from '../components/job-actions.js';
import { JobFacts } from '../components/job-facts.js';
import { JobTimeline } from '../components/job-timeline.js';
import { Layout } from '../components/layout.js';
import { UpdatedNote } from '../components/live-toggle.js';
import { useResource } from '../hooks/use-resource.js';
import { shortId } from '../ids.js';

const LIVE_MS = 5000;

async function loadJob(id: string): Promise<{ job: Job; attempts: AttemptList['attempts'] }> {
  const path = `/v1/jobs/${encodeURIComponent(id)}`;
  const [job, list] = await Promise.all([api.get<Job>(path), api.get<AttemptList>(`${path}/attempts`)]);
  return { job, attempts: list.attempts };
}

/** `/console/jobs/:id`: a job, its timeline, attempts and payload, and what can be done to it. */
export function JobPage({ id }: { id: string }) {
  // Live while the job can still change; a finished (or unreadable) job is not asked again.
  const [live, setLive] = useState(false);
  const res = useResource(() => loadJob(id), [id], live ? LIVE_MS : undefined);
  // A failed refresh keeps what was shown (the error above it); another job's data is never shown.
  const job = res.data?.job.id === id ? res.data.job : undefined;
  useEffect(() => setLive(job !== undefined && !TERMINAL_STATES.has(job.state)), [job?.state]);

  return (
    <Layout title={`Job ${shortId(id)}`}>
      <ErrorNote error={res.error} />
      {!job ? (
        <p aria-busy={res.loading}>{res.loading ? 'Loading…' : ''}</p>
      ) : (
        <>
          <p class="muted">
            {live && `Live: refreshed every ${LIVE_MS / 1000} s until it finishes. `}
            <UpdatedNote updatedAt={res.updatedAt} />
          </p>
          <JobFacts job={job} />
          <JobActions job={job} onDone={() => res.reload()} />
          <section aria-labelledby="timeline">
            <h2 id="timeline">Timeline</h2>
            <JobTimeline job={job} />
          </section>
          <section aria-labelledby="attempts">
            <h2 id="attempts">Attempts</h2>
            <AttemptsTable attempts={res.data?.attempts ?? []} />
          </section>
          <section aria-labelledby="payload">
            <h2 id="payload">Payload</h2>
            <pre class="payload" tabIndex={0} aria-labelledby="payload">
              {JSON.stringify(job.payload, null, 2)}
            </pre>
          </section>
        </>
      )}
    </Layout>
  );
}
