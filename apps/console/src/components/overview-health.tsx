import { TableWrap } from './table-wrap.js';
import type { Overview, SystemStatus } from '../api/types.js';
import { StateBadge } from './state-badge.js';
import { duration, Time } from './time.js';

/** Active alerts first: what pages someone. Empty is said in words. */
export function AlertList({ alerts }: { alerts: Overview['alerts'] }) {
  if (alerts.length === 0) return <p>No alert is active.</p>;
  return (
    <ul class="alerts">
      {alerts.map((a) => (
        <li key={`${a.name}:${JSON.stringify(a.labels)}`}>
          <StateBadge state="alert" /> <strong>{a.name}</strong>{' '}
          {Object.entries(a.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}{' '}
          — {a.summary} (since <Time at={a.since} />)
        </li>
      ))}
    </ul>
  );
}

/** The canary of each class: when one last went all the way through, and how long it took. */
export function CanaryTable({ canaries }: { canaries: Overview['canaries'] }) {
  if (canaries.length === 0) return <p>No canary has run yet.</p>;
  return (
    <TableWrap label="Canaries">
      <table>
        <thead>
          <tr>
            <th scope="col">Class</th>
            <th scope="col">Canary</th>
            <th scope="col">Last success</th>
            <th scope="col">End to end</th>
          </tr>
        </thead>
        <tbody>
          {canaries.map((c) => (
            <tr key={c.resource_class}>
              <td>{c.resource_class}</td>
              <td>
                <StateBadge state={c.stalled ? 'stalled' : 'ok'} />
              </td>
              <td>
                <Time at={c.last_success_at} />
              </td>
              <td>{c.latency_ms === null ? '—' : duration(c.latency_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Partitions the delay tier runs from PostgreSQL alone (Redis refused writes at maxmemory). */
export function PostgresOnly({ partitions }: { partitions: Overview['postgres_only'] }) {
  if (partitions.length === 0) return <p>Every partition runs from its Redis hot set.</p>;
  return (
    <p role="status">
      <StateBadge state="degraded" /> PostgreSQL-only mode on partition
      {partitions.length > 1 ? 's' : ''}{' '}
      {partitions.map((p, i) => (
        <span key={p.partition}>
          {i > 0 ? ', ' : ''}
          {p.partition} (since <Time at={p.since} />, {p.owner})
        </span>
      ))}
      : jobs still run on time from PostgreSQL; the window shrinks until Redis has memory again.
    </p>
  );
}

/** Each Kairos consumer group: its members (the app instances) and how far behind it is. */
export function ConsumerLag({ status }: { status: SystemStatus }) {
  return (
    <TableWrap label="Consumer groups">
      <table>
        <thead>
          <tr>
            <th scope="col">Consumer group</th>
            <th scope="col">State</th>
            <th scope="col">Members</th>
            <th scope="col">Lag (messages)</th>
          </tr>
        </thead>
        <tbody>
          {status.groups.map((g) => (
            <tr key={g.group}>
              <td>{g.group}</td>
              <td>{g.state}</td>
              <td>{g.members.length}</td>
              <td>{g.lag}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        {status.services.map((s) => `${s.name}: ${s.ok ? 'up' : 'DOWN'} (${s.detail})`).join(' · ')}
      </p>
    </TableWrap>
  );
}
