/**
 * What an every-tenant key sees before it picks a tenant: searches are one tenant at a time, so
 * the page asks for one instead of showing the API's 400.
 */
export function TenantNeeded({ what }: { what: string }) {
  return (
    <p class="notice" role="status">
      This key reads every tenant, and {what} are shown one tenant at a time: enter a tenant in the{' '}
      <a href="#tenant">Tenant</a> field at the top and choose Show.
    </p>
  );
}
