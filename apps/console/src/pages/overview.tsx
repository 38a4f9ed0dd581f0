import { api } from '../api/client.js';
import type { Overview as OverviewData, SystemStatus } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { JobCounts } from '../components/job-counts.js';
import { Layout } from '../components/layout.js';
import { LagChart } from '../components/lag-chart.js';
import { LagTable } from '../components/lag-table.js';
import { AlertList, CanaryTable, ConsumerLag, PostgresOnly } from '../components/overview-health.js';
import { useSession } from '../context.js';
import { useResource } from '../hooks/use-resource.js';

const REFRESH_MS = 10_000;
const MINUTES = 60;

/**
 * The state of the deployment at a glance: alerts and canaries, PostgreSQL-only partitions, live
 * jobs, an hour of dispatch lag, and (admin keys) the consumer groups' lag. Refreshes itself.
 */
export function Overview() {
  const s = useSession();
  const tenant = s.admin ? s.tenant : undefined;
  const overview = useResource(
    () => api.get<OverviewData>('/v1/overview', { tenant, minutes: MINUTES }),
    [tenant],
    REFRESH_MS,
  );
  const status = useResource(
    () => (s.admin ? api.get<SystemStatus>('/v1/status') : Promise.resolve(undefined)),
    [s.admin],
    REFRESH_MS,
  );
  const o = overview.data;
  return (
    <Layout title="Overview">
      <ErrorNote error={overview.error} />
      {o === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          {/* Only the alerts are a live region: the whole page re-read every 10 s would drown them. */}
          <section aria-labelledby="alerts" aria-live="polite">
            <h2 id="alerts">Alerts</h2>
            <AlertList alerts={o.alerts} />
            <PostgresOnly partitions={o.postgres_only} />
          </section>
          <section aria-labelledby="lag">
            <h2 id="lag">Dispatch lag, last hour</h2>
            <LagChart
              series={o.dispatch_lag}
              from={Date.parse(o.at) / 1000 - MINUTES * 60}
              to={Date.parse(o.at) / 1000}
            />
            <LagTable series={o.dispatch_lag} />
          </section>
          <section aria-labelledby="jobs">
            <h2 id="jobs">Live jobs</h2>
            <JobCounts jobs={o.jobs} />
          </section>
          {s.admin && (
            <section aria-labelledby="canaries">
              <h2 id="canaries">Canaries</h2>
              <CanaryTable canaries={o.canaries} />
            </section>
          )}
        </>
      )}
      {s.admin && (
        <section aria-labelledby="consumers">
          <h2 id="consumers">Consumer lag</h2>
          <ErrorNote error={status.error} />
          {status.data ? <ConsumerLag status={status.data} /> : <p aria-busy="true">Loading…</p>}
        </section>
      )}
    </Layout>
  );
}
