import type { ReplayAuditEntry } from '../api/types.js';
import { TableWrap } from './table-wrap.js';
import { TableHead } from './table-head.js';
import { Time } from './time.js';

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A replay's audit trail (append-only in `replay_audit`): who did what, when, with what detail. */
export function AuditTrail({ audit }: { audit: readonly ReplayAuditEntry[] }) {
  return (
    <TableWrap label="Audit trail">
      <table class="striped">
        <caption class="visually-hidden">Audit trail</caption>
        <TableHead columns={['At', 'Action', 'By', 'Detail']} />
        <tbody>
          {audit.map((a, i) => (
            <tr key={`${a.at}-${i}`}>
              <td>
                <Time at={a.at} />
              </td>
              <td>{a.action}</td>
              <td class="mono">{a.actor}</td>
              <td class="detail-cell">
                {Object.entries(a.detail).map(([k, v]) => (
                  <span key={k} class="detail-pair">
                    {k}: <code>{text(v)}</code>
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
