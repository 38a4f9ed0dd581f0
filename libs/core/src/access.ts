import { ANY_TENANT, hasScope, type Principal, type Scope } from './auth.js';
import { KairosError } from './errors.js';

/**
 * What a route needs of its caller: a scope, held for the key's own tenant, or `system`: an
 * action on the whole deployment (its status, worker services, the delay tier's rate limits and
 * lookahead, anything that is every tenant's), which only the system admin may take.
 *
 * A tenant's `admin` key is an administrator of that tenant only: its keys, jobs, schedules and
 * dead letters. A rate limit or a lookahead is shared by every tenant, and the status shows every
 * tenant's consumers and hosts, so a tenant admin must not reach them.
 */
export type Access = Scope | 'system';

/** The system admin: an `admin` key of every tenant ('*'), or authentication off. */
export function isSystemAdmin(p: Principal): boolean {
  return p.tenant === ANY_TENANT && p.scopes.includes('admin');
}

/** Whether the principal may do what `need` names. The one policy every route goes through. */
export function mayAccess(p: Principal, need: Access): boolean {
  return need === 'system' ? isSystemAdmin(p) : hasScope(p, need);
}

/** 403 unless the principal may do what `need` names; the message says what is missing. */
export function requireAccess(p: Principal, need: Access): void {
  if (mayAccess(p, need)) return;
  throw new KairosError(
    'FORBIDDEN',
    need === 'system'
      ? "this acts on the whole deployment: it needs an admin key of every tenant ('*')"
      : `this API key lacks the scope ${need}`,
  );
}
