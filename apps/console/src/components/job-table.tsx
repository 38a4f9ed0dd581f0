import type { Job } from '../api/types.js';
import { shortId } from '../ids.js';
import { paths } from '../paths.js';
import { StateBadge } from './state-badge.js';
import { TableHead } from './table-head.js';
import { TableWrap } from './table-wrap.js';
import { Time } from './time.js';

const COLUMNS = ['Job', 'State', 'Type', 'Class', 'Due', 'Attempt', 'Last error'];

/** A page of jobs: each row links to the job's page. */
export function JobTable({ jobs, caption }: { jobs: readonly Job[]; caption: string }) {
  if (jobs.length === 0) return <p>No jobs match.</p>;
  return (
    <TableWrap label={caption}>
      <table class="striped">
        <caption class="visually-hidden">{caption}</caption>
        <TableHead columns={COLUMNS} />
        <tbody>
          {jobs.map((j) => (
            <tr key={j.id}>
              <td>
                <a href={paths.job(j.id)} class="mono" aria-label={`job ${j.id}`}>
                  {shortId(j.id)}
                </a>
              </td>
              <td>
                <StateBadge state={j.state} />
              </td>
              <td>{j.type}</td>
              <td>{j.resource_class}</td>
              <td>
                <Time at={j.due_at} />
              </td>
              <td>
                {j.attempt}/{j.max_attempts}
              </td>
              <td class="error-cell" title={j.last_error ?? undefined}>
                {j.last_error ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
