import { api } from '../api/client.js';
import type { SchedulePage } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { Pager } from '../components/pager.js';
import { Layout } from '../components/layout.js';
import { LiveToggle } from '../components/live-toggle.js';
import { ScheduleTable } from '../components/schedule-table.js';
import { TenantNeeded } from '../components/tenant-needed.js';
import { useSession } from '../context.js';
import { useCursorTrail, useQueryState } from '../hooks/use-query-state.js';
import { useResource } from '../hooks/use-resource.js';

const PAGE_SIZE = 50;
const LIVE_SECONDS = 5;
const STATES = ['ACTIVE', 'PAUSED'] as const;

/**
 * A tenant's schedules, in creation order, a page at a time. The API lists every live schedule
 * (deleted ones left out) without a state filter, so the state filter applies to the page shown.
 */
export function Schedules() {
  const { tenant } = useSession();
  const q = useQueryState();
  const trail = useCursorTrail(q, 'pages');
  const live = q.query.live === '1';
  const state = q.query.state ?? '';
  const r = useResource(
    () =>
      tenant
        ? api.get<SchedulePage>('/v1/schedules', { tenant, limit: PAGE_SIZE, after: trail.cursor })
        : Promise.resolve(undefined),
    [tenant, trail.cursor],
    live ? LIVE_SECONDS * 1000 : undefined,
  );
  const shown = (r.data?.schedules ?? []).filter((s) => state === '' || s.state === state);
  return (
    <Layout title="Schedules">
      {!tenant && <TenantNeeded what="schedules" />}
      <div class="actions toolbar sched-toolbar">
        <label for="state-filter">
          State (on this page)
          <select id="state-filter" value={state} onChange={(e) => q.set({ state: e.currentTarget.value })}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <LiveToggle
          live={live}
          onChange={(on) => q.set({ live: on ? '1' : '' })}
          seconds={LIVE_SECONDS}
          updatedAt={r.updatedAt}
        />
      </div>
      <ErrorNote error={r.error} />
      {/* Not a live region: a refresh is announced by LiveToggle's note, a new page by the Pager. */}
      <section aria-busy={r.loading}>{r.data && <ScheduleTable schedules={shown} />}</section>
      {r.data && (
        <Pager
          page={trail.page}
          hasNext={r.data.next_after !== null}
          onFirst={trail.first}
          onPrevious={trail.previous}
          onNext={() => r.data?.next_after && trail.next(r.data.next_after)}
          firstLabel="First"
        />
      )}
    </Layout>
  );
}
