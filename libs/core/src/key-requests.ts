import { ANY_TENANT, hasScope, isScope, SCOPES, type Principal, type Scope } from './auth.js';
import { KairosError, type FieldError } from './errors.js';

export interface NewKeySpec {
  readonly name: string;
  readonly tenant: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt: Date | null;
  readonly ratePerSec: number | null;
}

/** The largest rate a key may be given, whoever makes it. */
export const KEY_RATE_MAX = 1_000_000;

const FIELDS = ['name', 'tenant', 'scopes', 'expires_at', 'rate_per_sec'];

type Bad = (field: string, message: string) => void;

/**
 * Validates a key-creation request (`{name, tenant?, scopes, expires_at?, rate_per_sec?}`) made
 * by `creator`. A key never gets more than its creator has, so a leaked or delegated key cannot
 * mint a stronger one: its tenant (a tenant admin makes keys of its own tenant only), scopes it
 * holds, a rate no higher than its own (a creator without a rate has the deployment's
 * `defaultRatePerSec`) and an expiry no later than its own. Left out, the expiry is the
 * creator's and the rate the default (the creator's when lower). Every bad field is named in one
 * 400.
 */
export function parseNewKey(
  body: unknown,
  creator: Principal,
  now: Date,
  defaultRatePerSec: number,
): NewKeySpec {
  const isObject = body !== null && typeof body === 'object' && !Array.isArray(body);
  const b = (isObject ? body : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  const bad: Bad = (field, message) => errors.push({ field, message });
  if (!isObject) bad('(body)', 'must be an object');
  for (const k of Object.keys(b)) if (!FIELDS.includes(k)) bad(k, 'unknown field');
  const name = b.name;
  if (typeof name !== 'string' || !/^[\w.:@-]{1,100}$/.test(name)) {
    bad('name', 'required: 1–100 letters, digits or ._:@-');
  }
  const tenant = parseTenant(b.tenant, creator, bad);
  const scopes = parseScopes(b.scopes, creator, bad);
  const expiresAt = parseExpiry(b.expires_at, creator, now, bad);
  const ratePerSec = parseRate(b.rate_per_sec, creator, defaultRatePerSec, bad);
  if (errors.length > 0)
    throw new KairosError('VALIDATION', `${errors.length} invalid field(s)`, { fields: errors });
  return { name: name as string, tenant: tenant as string, scopes, expiresAt, ratePerSec };
}

function parseTenant(given: unknown, creator: Principal, bad: Bad): string | undefined {
  const tenant = given ?? (creator.tenant === ANY_TENANT ? undefined : creator.tenant);
  if (typeof tenant !== 'string' || !(tenant === ANY_TENANT || /^[\w.:@-]{1,200}$/.test(tenant))) {
    bad('tenant', 'required: a tenant id or "*"');
    return undefined;
  }
  if (creator.tenant !== ANY_TENANT && tenant !== creator.tenant) {
    bad('tenant', `must be ${creator.tenant} (your key's tenant)`);
  }
  return tenant;
}

function parseScopes(given: unknown, creator: Principal, bad: Bad): Scope[] {
  if (!Array.isArray(given) || given.length === 0) {
    bad('scopes', `required: a list of ${SCOPES.join(', ')}`);
    return [];
  }
  given.forEach((s, i) => {
    if (typeof s !== 'string' || !isScope(s)) bad(`scopes.${i}`, `one of ${SCOPES.join(', ')}`);
    else if (!hasScope(creator, s)) bad(`scopes.${i}`, `your key does not hold ${s}`);
  });
  return [...new Set(given as Scope[])];
}

/** The child's expiry: at most the creator's; the creator's when left out. */
function parseExpiry(v: unknown, creator: Principal, now: Date, bad: Bad): Date | null {
  const ceiling = creator.expiresAt;
  if (v === undefined || v === null) return ceiling;
  const at = typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? new Date(v) : new Date(NaN);
  if (Number.isNaN(at.getTime())) bad('expires_at', 'an ISO-8601 time with an offset, or null');
  else if (at.getTime() <= now.getTime()) bad('expires_at', 'must be in the future');
  else if (ceiling !== null && at.getTime() > ceiling.getTime()) {
    bad('expires_at', `at most ${ceiling.toISOString()} (your key's expiry)`);
  }
  return at;
}

/**
 * The child's rate: at most the creator's, itself the deployment default when it has none. Left
 * out (or null), the default as for any key, unless the creator's own rate is lower: then the
 * creator's, so a child never outruns it.
 */
function parseRate(v: unknown, creator: Principal, defaultRate: number, bad: Bad): number | null {
  const own = creator.ratePerSec;
  if (v === undefined || v === null) return own !== null && own < defaultRate ? own : null;
  const ceiling = Math.min(own ?? defaultRate, KEY_RATE_MAX);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > KEY_RATE_MAX) {
    bad('rate_per_sec', 'an integer from 1 to 1,000,000, or null for the default');
  } else if (v > ceiling) {
    bad('rate_per_sec', `at most ${ceiling} (your key's rate)`);
  }
  return v as number;
}

/**
 * The query of `DELETE /v1/keys/{id}`: `cascade=true` revokes the keys the key made too,
 * transitively; `false` or left out, the key alone. Anything else is a 400 naming it.
 */
export function parseRevokeQuery(query: unknown): { cascade: boolean } {
  const q = (query !== null && typeof query === 'object' ? query : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const k of Object.keys(q))
    if (k !== 'cascade') errors.push({ field: k, message: 'unknown parameter' });
  const cascade = q.cascade ?? 'false';
  if (cascade !== 'true' && cascade !== 'false') {
    errors.push({ field: 'cascade', message: 'true or false' });
  }
  if (errors.length > 0)
    throw new KairosError('VALIDATION', `${errors.length} invalid parameter(s)`, { fields: errors });
  return { cascade: cascade === 'true' };
}
