import { useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api/client.js';
import type { DeadLetterPage, Replay } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { JobFilters, type Filters } from '../components/job-filters.js';
import { JobTable } from '../components/job-table.js';
import { Pager } from '../components/pager.js';
import { Layout } from '../components/layout.js';
import { LiveToggle } from '../components/live-toggle.js';
import { ReplayForm } from '../components/replay-form.js';
import { ReplayList } from '../components/replay-list.js';
import { TenantNeeded } from '../components/tenant-needed.js';
import { useSession } from '../context.js';
import { useResource } from '../hooks/use-resource.js';
import { paths } from '../paths.js';
import { firstPage, nextPage, pageIndex, previousPage } from '../cursor-trail.js';
import { jobSearchUrl, parseJobSearch, type JobSearchState } from '../job-search-url.js';

const LIVE_SECONDS = 5;
const LIVE_MS = LIVE_SECONDS * 1000;
/** While a replay runs its progress is worth following without asking. */
const RUNNING_MS = 2000;

interface ListProps {
  readonly search: JobSearchState;
  readonly filter: Filters;
  readonly go: (s: JobSearchState) => void;
  readonly setLive: (live: boolean) => void;
}

function DeadLetterList({ search, filter, go, setLive }: ListProps) {
  const list = useResource(
    () =>
      api.get<DeadLetterPage>('/v1/dead-letters', { ...filter, limit: search.limit, cursor: search.cursor }),
    [filter, search.limit, search.cursor],
    search.live ? LIVE_MS : undefined,
  );
  const page = list.data;
  return (
    <section aria-labelledby="list-title" aria-busy={list.loading}>
      <h2 id="list-title">Dead letters</h2>
      <LiveToggle live={search.live} seconds={LIVE_SECONDS} updatedAt={list.updatedAt} onChange={setLive} />
      <ErrorNote error={list.error} />
      {page && (
        <>
          <p aria-live="polite" class="muted">
            {page.dead_letters.length} on this page{page.next_cursor ? ', more on the next' : ''}.
          </p>
          <JobTable jobs={page.dead_letters} caption="Dead letters, newest first" />
          <Pager
            page={pageIndex(search)}
            hasNext={page.next_cursor !== null}
            onFirst={() => go(firstPage(search))}
            onPrevious={() => go(previousPage(search))}
            onNext={() => page.next_cursor && go(nextPage(search, page.next_cursor))}
          />
        </>
      )}
    </section>
  );
}

function RecentReplays({ tenant, live }: { tenant: string; live: boolean }) {
  const [running, setRunning] = useState(false);
  const list = useResource(
    async () => {
      const { replays } = await api.get<{ replays: Replay[] }>('/v1/replays');
      // A key of every tenant sees every tenant's replays; show the tenant the page looks at.
      const mine = replays.filter((r) => r.tenant === tenant).slice(0, 20);
      setRunning(mine.some((r) => r.state === 'RUNNING'));
      return mine;
    },
    [tenant],
    running ? RUNNING_MS : live ? LIVE_MS : undefined,
  );
  return (
    <section aria-labelledby="replays-title" aria-busy={list.loading}>
      <h2 id="replays-title">Recent replays</h2>
      <ErrorNote error={list.error} />
      <div aria-live="polite">{list.data && <ReplayList replays={list.data} />}</div>
    </section>
  );
}

/**
 * The dead letters (FAILED jobs) with every filter of the job search but state, filters and page
 * in the URL; a replay of what the filter selects (dry run, then confirm); the recent replays.
 */
export function DeadLetters() {
  const s = useSession();
  const { url, query, route } = useLocation();
  const search = useMemo(() => parseJobSearch(query), [url]);
  const go = (next: JobSearchState) => route(jobSearchUrl(next, paths.deadLetters));
  // An any-tenant key names the tenant in every query; a tenant key's own is implied.
  const filter = useMemo(
    () => (s.admin && s.tenant ? { ...search.filters, tenant: s.tenant } : search.filters),
    [search, s.admin, s.tenant],
  );
  const filterCount = Object.keys(search.filters).length;
  return (
    <Layout title="Dead letters">
      {/* Collapsible, as on the jobs page: eleven filters fill a phone's screen. */}
      <details class="filters-box" open>
        <summary>Filters{filterCount > 0 && ` (${filterCount} set)`}</summary>
        <JobFilters
          value={search.filters}
          onApply={(filters) => go(firstPage({ ...search, filters }))}
          omit={['state']}
        />
      </details>
      {s.admin && !s.tenant ? (
        <TenantNeeded what="dead letters" />
      ) : (
        <>
          <DeadLetterList
            search={search}
            filter={filter}
            go={go}
            setLive={(live) => route(jobSearchUrl({ ...search, live }, paths.deadLetters), true)}
          />
          <section aria-labelledby="replay-title">
            <h2 id="replay-title">Replay these</h2>
            <ReplayForm key={JSON.stringify(filter)} filter={filter} />
          </section>
          <RecentReplays tenant={s.tenant} live={search.live} />
        </>
      )}
    </Layout>
  );
}
