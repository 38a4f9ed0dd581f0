import type { Attempt } from '../api/types.js';
import { TableHead } from './table-head.js';
import { TableWrap } from './table-wrap.js';
import { duration, span, Time } from './time.js';

const COLUMNS = [
  'Attempt',
  'Fence',
  'Epoch',
  'Worker',
  'Outcome',
  'Failure class',
  'Error',
  'Dispatched',
  'Started',
  'Finished',
  'Ran',
  'Suppressed',
];

function Failure({ a }: { a: Attempt }) {
  if (!a.failure_class) return <span class="muted">—</span>;
  return (
    <>
      {a.failure_class}
      {a.retry_after_ms !== null && <small> (retry after {duration(a.retry_after_ms)})</small>}
    </>
  );
}

/** Every attempt of a job, first first: who ran it under which fence, how and when it ended. */
export function AttemptsTable({ attempts }: { attempts: readonly Attempt[] }) {
  if (attempts.length === 0) return <p>No attempt yet: the job has not been dispatched.</p>;
  return (
    <TableWrap label="Attempts">
      <table class="striped">
        <caption class="visually-hidden">Attempts, first first</caption>
        <TableHead columns={COLUMNS} />
        <tbody>
          {attempts.map((a) => (
            <tr key={a.fence}>
              <th scope="row">{a.attempt}</th>
              <td class="mono">{a.fence}</td>
              <td class="mono">{a.epoch}</td>
              <td class="mono">{a.worker_id ?? '—'}</td>
              <td>{a.outcome ?? <span class="muted">none yet</span>}</td>
              <td>
                <Failure a={a} />
              </td>
              <td class="error-cell" title={a.error_message ?? undefined}>
                {a.error_class && <code>{a.error_class}</code>} {a.error_message ?? ''}
              </td>
              <td>
                <Time at={a.dispatched_at} />
              </td>
              <td>
                <Time at={a.started_at} />
              </td>
              <td>
                <Time at={a.finished_at} />
              </td>
              <td class="mono">{span(a.started_at, a.finished_at)}</td>
              <td>{a.suppressed ? 'yes: a zombie’s late result, ignored' : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
