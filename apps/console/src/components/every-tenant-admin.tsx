import { useSession } from '../context.js';

/**
 * What a key that may not see `what` is told instead of the API's 403: those pages serve every
 * tenant, so they need a key with the admin scope of every tenant (`*`); says which this key lacks.
 */
export function EveryTenantAdminNeeded({ what }: { what: string }) {
  const { who, admin } = useSession();
  const lacks = [
    admin ? '' : `is a key of tenant ${who.tenant} only`,
    who.scopes.includes('admin') ? '' : 'lacks the admin scope',
  ].filter((l) => l !== '');
  return (
    <p class="notice" role="status">
      {what} serve every tenant, so this page needs an API key with the <code>admin</code> scope for every
      tenant (<code>*</code>). This key ({who.name}) {lacks.join(' and ')}: log in with such a key to see
      them.
    </p>
  );
}

/** Whether the session's key is an admin key of every tenant (what those pages need). */
export function useEveryTenantAdmin(): boolean {
  const { who, admin } = useSession();
  return admin && who.scopes.includes('admin');
}
