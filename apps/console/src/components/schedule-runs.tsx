import { api } from '../api/client.js';
import type { Job } from '../api/types.js';
import { useCursorTrail, type QueryState } from '../hooks/use-query-state.js';
import { useResource } from '../hooks/use-resource.js';
import { paths } from '../paths.js';
import { ErrorNote } from './error-note.js';
import { Pager } from './pager.js';
import { StateBadge } from './state-badge.js';
import { Time } from './time.js';
import { TableWrap } from './table-wrap.js';
import { shortId } from '../ids.js';
import { TableHead } from './table-head.js';

const PAGE_SIZE = 20;
const COLUMNS = ['Occurrence', 'Kind', 'State', 'Job', 'Due', 'Finished', 'Attempt', 'Last error'];

function RunRow({ j }: { j: Job }) {
  return (
    <tr>
      <td>
        <Time at={j.occurrence?.at} />
      </td>
      <td>{j.occurrence?.kind ?? '—'}</td>
      <td>
        <StateBadge state={j.state} />
      </td>
      <td>
        <a href={paths.job(j.id)} class="mono" aria-label={`job ${j.id}`}>
          {shortId(j.id)}
        </a>
      </td>
      <td>
        <Time at={j.due_at} />
      </td>
      <td>
        <Time at={j.finished_at} />
      </td>
      <td>
        {j.attempt}/{j.max_attempts}
      </td>
      <td class="error-cell" title={j.last_error ?? undefined}>
        {j.last_error ?? ''}
      </td>
    </tr>
  );
}

/**
 * The schedule's runs, newest occurrence first, a page at a time (`before` the oldest occurrence
 * of the page; the trail of pages kept in the URL's `runs`). Each links to its job's page.
 */
export function ScheduleRuns(p: { id: string; q: QueryState; tick: number; live: number | undefined }) {
  const trail = useCursorTrail(p.q, 'runs');
  const r = useResource(
    () =>
      api.get<{ runs: Job[] }>(`/v1/schedules/${encodeURIComponent(p.id)}/runs`, {
        limit: PAGE_SIZE,
        before: trail.cursor,
      }),
    [p.id, trail.cursor, p.tick],
    p.live,
  );
  const runs = r.data?.runs ?? [];
  const oldest = runs.at(-1)?.occurrence?.at;
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Runs</h2>
      <ErrorNote error={r.error} />
      {/* Not a live region: the page's LiveToggle announces refreshes, the Pager a new page. */}
      <div aria-busy={r.loading}>
        {r.data && runs.length === 0 ? (
          <p>No runs yet.</p>
        ) : (
          <TableWrap label="Run list">
            <table class="striped">
              <caption class="visually-hidden">Runs, newest occurrence first</caption>
              <TableHead columns={COLUMNS} />
              <tbody>
                {runs.map((j) => (
                  <RunRow key={j.id} j={j} />
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </div>
      <Pager
        page={trail.page}
        hasNext={runs.length === PAGE_SIZE && oldest !== undefined}
        onFirst={trail.first}
        onPrevious={trail.previous}
        onNext={() => oldest && trail.next(oldest)}
      />
    </section>
  );
}
