import { TableWrap } from './table-wrap.js';
import type { Overview } from '../api/types.js';
import { duration } from './time.js';

/** The chart's figures in words: per class, dispatches in the period, the latest minute, the worst. */
export function LagTable({ series }: { series: Overview['dispatch_lag'] }) {
  if (series.length === 0) return null;
  return (
    <TableWrap label="Dispatch lag per class">
      <table>
        <caption class="visually-hidden">Dispatch lag per class</caption>
        <thead>
          <tr>
            <th scope="col">Class</th>
            <th scope="col" class="num">
              Dispatched
            </th>
            <th scope="col" class="num">
              p50 (latest minute)
            </th>
            <th scope="col" class="num">
              p99 (latest minute)
            </th>
            <th scope="col" class="num">
              Worst p99
            </th>
          </tr>
        </thead>
        <tbody>
          {series.map((s) => {
            const last = s.points.at(-1);
            const worst = Math.max(0, ...s.points.map((p) => p.p99_ms));
            return (
              <tr key={s.resource_class}>
                <td>{s.resource_class}</td>
                <td class="num">{s.points.reduce((n, p) => n + p.count, 0)}</td>
                <td class="num">{last ? duration(last.p50_ms) : '—'}</td>
                <td class="num">{last ? duration(last.p99_ms) : '—'}</td>
                <td class="num">{duration(worst)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableWrap>
  );
}
