import type { Schedule } from '../api/types.js';
import { paths } from '../paths.js';
import { StateBadge } from './state-badge.js';
import { Time } from './time.js';
import { ZoneTime } from './zone-time.js';
import { TableWrap } from './table-wrap.js';
import { shortId } from '../ids.js';
import { TableHead } from './table-head.js';

/** Late runs, misfires and skips in one cell: each number named, not only placed. */
export function RunRecord({ s }: { s: Schedule }) {
  return (
    <span>
      {s.late_runs} late · {s.misfires} misfired · {s.skips} skipped
    </span>
  );
}

const COLUMNS = [
  'Job type',
  'State',
  'Health',
  'Next fire (zone; your time)',
  'Cron',
  'Zone',
  'Class',
  'Last success',
  'Runs',
];

function Row({ s }: { s: Schedule }) {
  return (
    <tr>
      <td>
        <a href={paths.schedule(s.id)} aria-label={`schedule ${s.job.type} ${s.id}`}>
          {s.job.type}
        </a>
        <br />
        <span class="mono muted">{shortId(s.id)}</span>
      </td>
      <td>
        <StateBadge state={s.state} />
      </td>
      <td>
        <StateBadge state={s.health} />
      </td>
      <td>
        {s.next_fire ? (
          <>
            <ZoneTime local={s.next_fire.local} />
            <br />
            <Time at={s.next_fire.fire_at} />
          </>
        ) : (
          <span class="muted">none (not active)</span>
        )}
      </td>
      <td class="mono">{s.cron}</td>
      <td>{s.time_zone}</td>
      <td>{s.job.resource_class ?? '—'}</td>
      <td>
        <Time at={s.last_success_at} />
      </td>
      <td>
        <RunRecord s={s} />
      </td>
    </tr>
  );
}

/** A page of schedules: each row links to the schedule's page. */
export function ScheduleTable({ schedules }: { schedules: readonly Schedule[] }) {
  if (schedules.length === 0) return <p>No schedules.</p>;
  return (
    <TableWrap label="Schedule list">
      <table class="striped">
        <caption class="visually-hidden">Schedules</caption>
        <TableHead columns={COLUMNS} />
        <tbody>
          {schedules.map((s) => (
            <Row key={s.id} s={s} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
