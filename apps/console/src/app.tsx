import { useEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, Route, Router } from 'preact-iso';
import { call, whenUnauthenticated } from './api/client.js';
import type { Whoami } from './api/types.js';
import { SessionContext, type Session } from './context.js';
import { BASE } from './paths.js';
import { DeadLetters } from './pages/dead-letters.js';
import { JobPage } from './pages/job.js';
import { Jobs } from './pages/jobs.js';
import { Login } from './pages/login.js';
import { NotFound } from './pages/not-found.js';
import { Overview } from './pages/overview.js';
import { ReplayPage } from './pages/replay.js';
import { SchedulePage } from './pages/schedule.js';
import { Schedules } from './pages/schedules.js';
import { Workers } from './pages/workers.js';
import { clearKey, storedKey } from './session.js';

const TENANT = 'kairos.tenant';

function Pages() {
  return (
    <Router>
      <Route path={`${BASE}/`} component={Overview} />
      <Route path={BASE} component={Overview} />
      <Route path={`${BASE}/jobs`} component={Jobs} />
      <Route path={`${BASE}/jobs/:id`} component={JobPage} />
      <Route path={`${BASE}/schedules`} component={Schedules} />
      <Route path={`${BASE}/schedules/:id`} component={SchedulePage} />
      <Route path={`${BASE}/dead-letters`} component={DeadLetters} />
      <Route path={`${BASE}/replays/:id`} component={ReplayPage} />
      <Route path={`${BASE}/workers`} component={Workers} />
      <Route default component={NotFound} />
    </Router>
  );
}

/** The login page until a key is accepted, then the pages; a refused key (401) logs out. */
export function App() {
  const [who, setWho] = useState<Whoami | null>();
  const [tenant, setTenantState] = useState(() => sessionStorage.getItem(TENANT) ?? '');
  const logout = () => {
    clearKey();
    setWho(null);
  };
  useEffect(() => {
    whenUnauthenticated(() => setWho(null));
    if (!storedKey()) return setWho(null);
    call<Whoami>('GET', '/v1/whoami').then(setWho, () => logout());
  }, []);
  const session = useMemo<Session | undefined>(() => {
    if (!who) return undefined;
    const admin = who.tenant === '*';
    const setTenant = (t: string) => {
      sessionStorage.setItem(TENANT, t);
      setTenantState(t);
    };
    return { who, admin, tenant: admin ? tenant : who.tenant, setTenant, logout };
  }, [who, tenant]);

  if (who === undefined) return <p aria-busy="true">Loading…</p>;
  if (!session) return <Login onLogin={setWho} />;
  return (
    <SessionContext.Provider value={session}>
      <LocationProvider scope={BASE}>
        <Pages />
      </LocationProvider>
    </SessionContext.Provider>
  );
}
