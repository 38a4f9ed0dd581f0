import { api } from '../api/client.js';
import type { WorkerGroup } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { EveryTenantAdminNeeded, useEveryTenantAdmin } from '../components/every-tenant-admin.js';
import { Layout } from '../components/layout.js';
import { UpdatedNote } from '../components/live-toggle.js';
import { WorkerGroupTable, WorkerInstanceTable } from '../components/worker-tables.js';
import { useResource } from '../hooks/use-resource.js';

const REFRESH_MS = 10_000;

/** The groups and their instances; said in words when no service has run yet. */
function Groups({ groups }: { groups: readonly WorkerGroup[] }) {
  if (groups.length === 0) return <p>No worker service has run here yet.</p>;
  return (
    <>
      <section aria-labelledby="services">
        <h2 id="services">Services</h2>
        <WorkerGroupTable groups={groups} />
      </section>
      <section aria-labelledby="instances">
        <h2 id="instances">Worker instances</h2>
        <WorkerInstanceTable groups={groups} />
      </section>
    </>
  );
}

function WorkerServices() {
  const r = useResource(
    () => api.get<{ groups: WorkerGroup[] }>('/v1/workers').then((a) => a.groups),
    [],
    REFRESH_MS,
  );
  return (
    <>
      <p>
        <UpdatedNote updatedAt={r.updatedAt} />
      </p>
      <ErrorNote error={r.error} />
      {r.data ? <Groups groups={r.data} /> : !r.error && <p aria-busy="true">Loading…</p>}
      <p class="muted">
        A task whose job type no live worker handles waits on its class’s waiting topic, counted by class and
        type in <code>kairos_tasks_waiting</code> (alert <code>KairosTasksWaiting</code>); the Overview shows
        them as the lag of the group <code>kairos-delay-tier-waiting</code>.
      </p>
    </>
  );
}

/**
 * Worker services as `kairos workers` lists them (`GET /v1/workers`): each group with its service,
 * classes, handled job types, Kafka's state, members and lag, when it was last heard from, and
 * its instances. Refreshes itself. Needs an admin key of every tenant; any other is told so.
 */
export function Workers() {
  const allowed = useEveryTenantAdmin();
  return (
    <Layout title="Workers">
      {allowed ? <WorkerServices /> : <EveryTenantAdminNeeded what="Worker services" />}
    </Layout>
  );
}
