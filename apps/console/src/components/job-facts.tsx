import type { Job } from '../api/types.js';
import { withQuery } from '../api/client.js';
import { paths } from '../paths.js';
import { Fact } from './facts.js';
import { StateBadge } from './state-badge.js';
import { duration, Time } from './time.js';

const none = <span class="muted">none</span>;

/** Where the job came from and where to look next: its schedule, its original, its dead letters. */
function JobLinks({ job }: { job: Job }) {
  const links: { href: string; label: string }[] = [];
  if (job.schedule_id) {
    links.push({ href: paths.schedule(job.schedule_id), label: 'Its schedule' });
    links.push({
      href: withQuery(paths.jobs, { schedule_id: job.schedule_id }),
      label: 'Other runs of its schedule',
    });
  }
  if (job.replay_of) links.push({ href: paths.job(job.replay_of), label: 'The job it replays' });
  if (job.state === 'FAILED')
    links.push({
      href: withQuery(paths.deadLetters, { type: job.type }),
      label: `Dead letters of type ${job.type}`,
    });
  if (links.length === 0) return null;
  return (
    <nav aria-label="Related">
      <ul class="related">
        {links.map((l) => (
          <li key={l.href}>
            <a href={l.href}>{l.label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** The job's identity, state, policy and last failure, as a definition list. */
export function JobFacts({ job }: { job: Job }) {
  const r = job.retry;
  return (
    <>
      <dl class="facts">
        <Fact term="State">
          <StateBadge state={job.state} />
        </Fact>
        <Fact term="Id">
          <span class="mono">{job.id}</span>
        </Fact>
        <Fact term="Type">{job.type}</Fact>
        <Fact term="Resource class">{job.resource_class}</Fact>
        <Fact term="Tenant">{job.tenant}</Fact>
        <Fact term="Attempt">
          {job.attempt} of {job.max_attempts} (fence {job.fence}, version {job.version})
        </Fact>
        <Fact term="Retry backoff">
          base {duration(r.base_ms)}, cap {duration(r.cap_ms)}, jitter {duration(r.jitter_ms)}
        </Fact>
        <Fact term="Deadline">{job.deadline_at ? <Time at={job.deadline_at} /> : none}</Fact>
        <Fact term="Idempotency key">{job.idempotency_key ? <code>{job.idempotency_key}</code> : none}</Fact>
        <Fact term="Traceparent">{job.traceparent ? <code>{job.traceparent}</code> : none}</Fact>
        {job.occurrence && (
          <Fact term="Occurrence">
            <Time at={job.occurrence.at} /> ({job.occurrence.kind})
          </Fact>
        )}
        {job.last_error && (
          <Fact term="Last error">
            {job.last_failure_class && <strong>{job.last_failure_class}: </strong>}
            {job.last_error}
          </Fact>
        )}
      </dl>
      <JobLinks job={job} />
    </>
  );
}
