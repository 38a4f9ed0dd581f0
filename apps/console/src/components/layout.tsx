import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useSession } from '../context.js';
import { paths } from '../paths.js';

const NAV = [
  { href: paths.overview, label: 'Overview', exact: true },
  { href: paths.jobs, label: 'Jobs' },
  { href: paths.schedules, label: 'Schedules' },
  { href: paths.deadLetters, label: 'Dead letters' },
  { href: paths.workers, label: 'Workers' },
] as const;

/** An any-tenant key picks the tenant it looks at; a tenant key shows its own. */
function TenantPicker() {
  const s = useSession();
  const [draft, setDraft] = useState(s.tenant);
  if (!s.admin) return <span class="tenant">Tenant: {s.tenant}</span>;
  return (
    <form
      class="tenant-picker"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        s.setTenant(draft.trim());
      }}
    >
      <label for="tenant">Tenant</label>
      <input
        id="tenant"
        name="tenant"
        value={draft}
        placeholder="tenant id"
        onInput={(e) => setDraft(e.currentTarget.value)}
      />
      <button type="submit" class="outline">
        Show
      </button>
    </form>
  );
}

/** Every logged-in page: a skip link, the navigation (current page marked), the tenant, log out. */
export function Layout({ title, children }: { title: string; children: ComponentChildren }) {
  const { path } = useLocation();
  const s = useSession();
  const current = (href: string, exact?: boolean) =>
    exact ? path === href || path === href.replace(/\/$/, '') : path.startsWith(href);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="container-fluid top">
        <nav aria-label="Main">
          <ul>
            <li>
              <strong>Kairos</strong>
            </li>
          </ul>
          <ul class="pages">
            {NAV.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={current(n.href, 'exact' in n) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <TenantPicker />
          <span class="muted" title={s.who.key_id}>
            {s.who.name}
          </span>
          <button type="button" class="outline secondary" onClick={s.logout}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" class="container-fluid" tabIndex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
    </>
  );
}
