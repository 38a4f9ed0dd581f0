import { useMemo } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError } from '../api/client.js';
import type { JobPage } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { JobFilters } from '../components/job-filters.js';
import { JobTable } from '../components/job-table.js';
import { Pager } from '../components/pager.js';
import { Layout } from '../components/layout.js';
import { LiveToggle } from '../components/live-toggle.js';
import { PageSize } from '../components/page-size.js';
import { TenantNeeded } from '../components/tenant-needed.js';
import { useSession } from '../context.js';
import { useResource } from '../hooks/use-resource.js';
import { firstPage, nextPage, pageIndex, previousPage } from '../cursor-trail.js';
import { jobSearchUrl, PAGE_SIZES, parseJobSearch, type JobSearchState } from '../job-search-url.js';

const LIVE_SECONDS = 5;

/** The filters the API's 400 named (`state.0` is the state filter). */
const refused = (e: Error | undefined) =>
  e instanceof ApiError ? e.fields.map((f) => f.field.split('.')[0] ?? f.field) : [];

/** `/console/jobs`: the job search (`GET /v1/jobs`), its filters and page in the URL. */
export function Jobs() {
  const { url, query, route } = useLocation();
  const s = useSession();
  const search = useMemo(() => parseJobSearch(query), [url]);
  const needTenant = s.admin && !s.tenant;
  const key = `${s.tenant} ${url}`;
  const res = useResource(
    async () => {
      if (needTenant) return undefined;
      const query = { ...search.filters, tenant: s.admin ? s.tenant : undefined };
      const page = await api.get<JobPage>('/v1/jobs', {
        ...query,
        limit: search.limit,
        cursor: search.cursor,
      });
      return { key, page };
    },
    [key],
    search.live && !needTenant ? LIVE_SECONDS * 1000 : undefined,
  );
  const go = (next: JobSearchState) => route(jobSearchUrl(next));
  const page = res.error ? undefined : res.data?.page;
  // The rows on screen are another search's until this one's answer arrives.
  const stale = res.data?.key !== key;
  const filterCount = Object.keys(search.filters).length;

  return (
    <Layout title="Jobs">
      {/* Collapsible: twelve filters fill a phone's screen. */}
      <details class="filters-box" open>
        <summary>Filters{filterCount > 0 && ` (${filterCount} set)`}</summary>
        <JobFilters
          value={search.filters}
          invalid={refused(res.error)}
          onApply={(filters) => go(firstPage({ ...search, filters }))}
        />
      </details>
      <ErrorNote error={res.error} />
      {needTenant ? (
        <TenantNeeded what="jobs" />
      ) : (
        <section aria-labelledby="results" aria-busy={stale && res.loading}>
          <h2 id="results">Results</h2>
          <div class="actions toolbar">
            <PageSize
              value={search.limit}
              sizes={PAGE_SIZES}
              onChange={(limit) => go(firstPage({ ...search, limit }))}
            />
            <LiveToggle
              live={search.live}
              seconds={LIVE_SECONDS}
              updatedAt={res.updatedAt}
              onChange={(live) => route(jobSearchUrl({ ...search, live }), true)}
            />
          </div>
          {page && <JobTable jobs={page.jobs} caption="Jobs matching the filters, newest first" />}
          <Pager
            page={pageIndex(search)}
            hasNext={Boolean(page?.next_cursor)}
            onFirst={() => go(firstPage(search))}
            onPrevious={() => go(previousPage(search))}
            onNext={() => page?.next_cursor && go(nextPage(search, page.next_cursor))}
          />
        </section>
      )}
    </Layout>
  );
}
