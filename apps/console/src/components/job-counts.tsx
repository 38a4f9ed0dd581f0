import { TableWrap } from './table-wrap.js';
import type { Overview } from '../api/types.js';

const LIVE = ['SCHEDULED', 'QUEUED', 'RUNNING', 'FAILED'] as const;

/** Live jobs: a row per tenant and class, a column per state. */
export function JobCounts({ jobs }: { jobs: Overview['jobs'] }) {
  if (jobs.length === 0) return <p>No live job: nothing scheduled, queued, running or dead-lettered.</p>;
  const rows = new Map<string, Map<string, number>>();
  for (const j of jobs) {
    const key = `${j.tenant}\u0000${j.resource_class}`;
    const row = rows.get(key) ?? new Map<string, number>();
    row.set(j.state, (row.get(j.state) ?? 0) + j.count);
    rows.set(key, row);
  }
  return (
    <TableWrap label="Live jobs">
      <table>
        <thead>
          <tr>
            <th scope="col">Tenant</th>
            <th scope="col">Class</th>
            {LIVE.map((s) => (
              <th scope="col" key={s} class="num">
                {s}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {[...rows.entries()]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([key, row]) => {
              const [tenant, rc] = key.split('\u0000');
              return (
                <tr key={key}>
                  <td>{tenant}</td>
                  <td>{rc}</td>
                  {LIVE.map((s) => (
                    <td key={s} class="num">
                      {row.get(s) ?? 0}
                    </td>
                  ))}
                </tr>
              );
            })}
        </tbody>
      </table>
    </TableWrap>
  );
}
