import type { Replay } from '../api/types.js';
import { TableWrap } from './table-wrap.js';
import { shortId } from '../ids.js';
import { TableHead } from './table-head.js';
import { paths } from '../paths.js';
import { ReplayProgress } from './replay-progress.js';
import { StateBadge } from './state-badge.js';
import { Time } from './time.js';

/** Replays, newest first: each links to its page (progress and audit trail). */
export function ReplayList({ replays }: { replays: readonly Replay[] }) {
  if (replays.length === 0) return <p>No replays yet.</p>;
  return (
    <TableWrap label="Recent replays">
      <table class="striped">
        <caption class="visually-hidden">Recent replays</caption>
        <TableHead columns={['Replay', 'State', 'Progress', 'Rate', 'Started by', 'Started']} />
        <tbody>
          {replays.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={paths.replay(r.id)} class="mono" aria-label={`replay ${r.id}`}>
                  {shortId(r.id)}
                </a>
              </td>
              <td>
                <StateBadge state={r.state} />
              </td>
              <td>
                <ReplayProgress replay={r} label={`Progress of replay ${shortId(r.id)}`} />
              </td>
              <td>{r.rate_per_sec}/s</td>
              <td class="mono">{r.created_by}</td>
              <td>
                <Time at={r.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
