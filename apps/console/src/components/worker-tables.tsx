import type { WorkerGroup, WorkerInstance } from '../api/types.js';
import { StateBadge } from './state-badge.js';
import { TableHead } from './table-head.js';
import { TableWrap } from './table-wrap.js';
import { Time } from './time.js';

/** A list of names in one cell (wrapping), or a muted dash when there is none. */
function Names({ names }: { names: readonly string[] }) {
  if (names.length === 0) return <span class="muted">—</span>;
  return <>{names.join(', ')}</>;
}

const GROUP_COLUMNS = [
  'Group',
  'Service',
  'Classes',
  'Job types',
  'State',
  'Members',
  'Live workers',
  'Lag',
  'Last seen',
];
const NUMERIC = ['Members', 'Live workers', 'Lag'];

/** Each worker service's group, as `kairos workers` lists it: what it runs, Kafka's view, when last heard. */
export function WorkerGroupTable({ groups }: { groups: readonly WorkerGroup[] }) {
  return (
    <TableWrap label="Worker services">
      <table class="striped">
        <caption class="visually-hidden">Worker services</caption>
        <TableHead columns={GROUP_COLUMNS} numeric={NUMERIC} />
        <tbody>
          {groups.map((g) => (
            <tr key={g.group}>
              <th scope="row" class="mono">
                {g.group}
              </th>
              <td>
                <Names names={g.services} />
              </td>
              <td class="names">
                <Names names={g.resource_classes} />
              </td>
              <td class="names">
                <Names names={g.job_types} />
              </td>
              <td>{g.state}</td>
              <td class="num">{g.members}</td>
              <td class="num">{g.workers.filter((w) => w.live).length}</td>
              <td class="num">{g.lag}</td>
              <td>
                <Time at={g.last_seen_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

const INSTANCE_COLUMNS = [
  'Worker',
  'Group',
  'Heartbeat',
  'Host (pid)',
  'Started',
  'Last seen',
  'Classes',
  'Job types',
];

function InstanceRow({ group, w }: { group: string; w: WorkerInstance }) {
  return (
    <tr>
      <th scope="row" class="mono">
        {w.worker_id}
      </th>
      <td class="mono">{group}</td>
      <td>
        <StateBadge state={w.live ? 'live' : 'silent'} />
      </td>
      <td>
        {w.host} ({w.pid})
      </td>
      <td>
        <Time at={w.started_at} />
      </td>
      <td>
        <Time at={w.last_seen_at} />
      </td>
      <td class="names">
        <Names names={w.resource_classes} />
      </td>
      <td class="names">
        <Names names={w.job_types} />
      </td>
    </tr>
  );
}

/** Every worker instance heard from in the last hour: live (within 3 heartbeats) or silent. */
export function WorkerInstanceTable({ groups }: { groups: readonly WorkerGroup[] }) {
  const rows = groups.flatMap((g) => g.workers.map((w) => ({ group: g.group, w })));
  if (rows.length === 0) return <p>No worker instance has been heard from in the last hour.</p>;
  return (
    <TableWrap label="Worker instances">
      <table class="striped">
        <caption class="visually-hidden">Worker instances</caption>
        <TableHead columns={INSTANCE_COLUMNS} />
        <tbody>
          {rows.map(({ group, w }) => (
            <InstanceRow key={`${group}/${w.worker_id}`} group={group} w={w} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
