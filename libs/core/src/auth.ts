import { KairosError } from './errors.js';

/**
 * What an API key may do within its tenant. `admin` holds every other scope and manages the
 * tenant's keys; an `admin` key of every tenant is also the system admin (see access.ts). Reads
 * are separate from writes so a dashboard's key cannot cancel.
 */
export const SCOPES = [
  'jobs:read',
  'jobs:write',
  'schedules:read',
  'schedules:write',
  'dlq:read',
  'dlq:replay',
  'admin',
] as const;

export type Scope = (typeof SCOPES)[number];

/** The tenant of a key that may act for every tenant. */
export const ANY_TENANT = '*';

/** Who is calling: the key that authenticated the request, resolved and still valid. */
export interface Principal {
  /** The key's public id (`k_…`), or `anonymous` when authentication is off. */
  readonly keyId: string;
  readonly name: string;
  /** One tenant, or ANY_TENANT. */
  readonly tenant: string;
  readonly scopes: readonly Scope[];
  /** Requests per second this key may make; null: the deployment's default. */
  readonly ratePerSec: number | null;
  /** When the key stops working; null: never. The keys it makes expire no later. */
  readonly expiresAt: Date | null;
}

/** The principal of every request when authentication is off (local development only). */
export const ANONYMOUS_ADMIN: Principal = {
  keyId: 'anonymous',
  name: 'authentication off',
  tenant: ANY_TENANT,
  scopes: ['admin'],
  ratePerSec: null,
  expiresAt: null,
};

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

/** Whether the key holds the scope for its own tenant (`admin` holds them all). */
export function hasScope(p: Principal, scope: Scope): boolean {
  return p.scopes.includes('admin') || p.scopes.includes(scope);
}

/** Whether the principal may see a row of this tenant (else it is answered as not found). */
export function seesTenant(p: Principal, tenant: string): boolean {
  return p.tenant === ANY_TENANT || p.tenant === tenant;
}

/** The tenant a command is scoped to: undefined for an any-tenant key (no restriction). */
export function scopedTenant(p: Principal): string | undefined {
  return p.tenant === ANY_TENANT ? undefined : p.tenant;
}

/**
 * The body of a create request with its tenant taken from the key: a tenant key fills a missing
 * `tenant` and refuses (403) a different one; an any-tenant key leaves the body as it is (the
 * body must then name the tenant, as validation says).
 */
export function withKeyTenant(p: Principal, body: unknown, pathPrefix?: string): unknown {
  if (p.tenant === ANY_TENANT || body === null || typeof body !== 'object' || Array.isArray(body)) {
    return body;
  }
  const given = (body as Record<string, unknown>).tenant;
  if (given === undefined) return { ...body, tenant: p.tenant };
  if (given !== p.tenant) {
    const field = pathPrefix === undefined ? 'tenant' : `${pathPrefix}.tenant`;
    throw new KairosError('FORBIDDEN', `this API key acts for tenant ${p.tenant} only`, {
      fields: [{ field, message: `must be ${p.tenant} (the key's tenant) or left out` }],
    });
  }
  return body;
}

/** The tenant filter of a list request: the key's own, or for an any-tenant key the query's. */
export function listTenant(p: Principal, queried: string | undefined): string | undefined {
  if (queried !== undefined && !TENANT.test(queried)) {
    throw new KairosError('VALIDATION', 'invalid tenant', {
      fields: [{ field: 'tenant', message: 'a tenant id: 1–64 letters, digits or . _ : -' }],
    });
  }
  if (p.tenant === ANY_TENANT) return queried;
  if (queried !== undefined && queried !== p.tenant) {
    throw new KairosError('FORBIDDEN', `this API key acts for tenant ${p.tenant} only`, {
      fields: [{ field: 'tenant', message: `must be ${p.tenant} (the key's tenant) or left out` }],
    });
  }
  return p.tenant;
}

/** A tenant id as every request names it (create-job's rule). */
const TENANT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** `kairos_<id>_<secret>`: the id finds the key's row, the secret proves possession. */
const KEY_FORMAT = /^kairos_(k_[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface KeyParts {
  readonly id: string;
  readonly secret: string;
}

export function formatApiKey(parts: KeyParts): string {
  return `kairos_${parts.id}_${parts.secret}`;
}

/** The parts of a presented key, or undefined when it is not a Kairos key at all. */
export function parseApiKey(token: string): KeyParts | undefined {
  const m = KEY_FORMAT.exec(token);
  return m?.[1] && m[2] ? { id: m[1], secret: m[2] } : undefined;
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function bearerToken(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}
