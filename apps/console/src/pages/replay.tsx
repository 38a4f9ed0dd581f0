import { useState } from 'preact/hooks';
import { shortId } from '../ids.js';
import { api, withQuery } from '../api/client.js';
import type { Replay, ReplayWithAudit } from '../api/types.js';
import { AuditTrail } from '../components/audit-trail.js';
import { Confirm } from '../components/confirm.js';
import { ErrorNote } from '../components/error-note.js';
import { Fact } from '../components/facts.js';
import { FilterList } from '../components/filter-list.js';
import { Layout } from '../components/layout.js';
import { ReplayProgress } from '../components/replay-progress.js';
import { StateBadge } from '../components/state-badge.js';
import { span, Time } from '../components/time.js';
import { useResource } from '../hooks/use-resource.js';
import { paths } from '../paths.js';

/** A running replay is followed closely; a finished one no longer changes. */
const RUNNING_MS = 1000;

function Summary({ r }: { r: ReplayWithAudit }) {
  return (
    <dl class="facts">
      <Fact term="Rate">{r.rate_per_sec} per second</Fact>
      <Fact term="Tenant">{r.tenant}</Fact>
      <Fact term="Started by">
        <span class="mono">{r.created_by}</span>
      </Fact>
      <Fact term="Started">
        <Time at={r.created_at} />
      </Fact>
      <Fact term="Finished">
        <Time at={r.finished_at} /> {r.finished_at && `(took ${span(r.created_at, r.finished_at)})`}
      </Fact>
    </dl>
  );
}

/** Dead letters of this replay's filter, as the list shows them (tenant included). */
const filterLink = (r: Replay) =>
  withQuery(paths.deadLetters, Object.fromEntries(Object.entries(r.filter).map(([k, v]) => [k, String(v)])));

/** A replay: its progress (followed live while it runs), filter, rate, who started it, its audit trail; cancel. */
export function ReplayPage({ id }: { id: string }) {
  const [running, setRunning] = useState(false);
  const res = useResource(
    async () => {
      const got = await api.get<ReplayWithAudit>(`/v1/replays/${encodeURIComponent(id)}`);
      setRunning(got.state === 'RUNNING');
      return got;
    },
    [id],
    running ? RUNNING_MS : undefined,
  );
  const r = res.data;
  return (
    <Layout title={r ? `Replay ${shortId(r.id)}` : 'Replay'}>
      <ErrorNote error={res.error} />
      {r && (
        <>
          <section aria-labelledby="progress-title" aria-busy={res.loading && running}>
            <h2 id="progress-title">Progress</h2>
            <p aria-live="polite" class="replay-status">
              <StateBadge state={r.state} /> <ReplayProgress replay={r} label="Replay progress" />
            </p>
            {running && (
              <Confirm
                label="Cancel replay"
                title="Cancel this replay?"
                confirm="Cancel the replay"
                dismiss="Keep it running"
                danger
                action={async () => {
                  await api.post(`/v1/replays/${encodeURIComponent(r.id)}/cancel`);
                  res.reload();
                }}
              >
                <p>
                  The {r.replayed} job{r.replayed === 1 ? '' : 's'} already replayed stay; the other{' '}
                  {r.selected - r.replayed} are not sent.
                </p>
              </Confirm>
            )}
            <Summary r={r} />
          </section>
          <section aria-labelledby="filter-title">
            <h2 id="filter-title">Filter</h2>
            <FilterList filter={r.filter} />
            <p>
              <a href={filterLink(r)}>Dead letters of this filter</a>
            </p>
          </section>
          <section aria-labelledby="audit-title">
            <h2 id="audit-title">Audit trail</h2>
            <AuditTrail audit={r.audit} />
          </section>
        </>
      )}
    </Layout>
  );
}
