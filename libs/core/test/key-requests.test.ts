import { describe, expect, test } from 'vitest';
import {
  ANONYMOUS_ADMIN,
  isKairosError,
  parseNewKey,
  parseRevokeQuery,
  type Principal,
} from '../src/index.js';

const now = new Date('2026-12-02T12:00:00Z');
const inDays = (d: number) => new Date(now.getTime() + d * 86_400_000);
const DEFAULT_RATE = 1000;

const acmeAdmin: Principal = {
  keyId: 'k_1',
  name: 'acme',
  tenant: 'acme',
  scopes: ['admin'],
  ratePerSec: null,
  expiresAt: null,
};
/** A tenant admin with a rate and an expiry of its own: the ceiling of what it makes. */
const boundedAdmin: Principal = { ...acmeAdmin, ratePerSec: 50, expiresAt: inDays(30) };
const reader: Principal = { ...acmeAdmin, scopes: ['jobs:read', 'jobs:write'] };

/** The fields a refused request names, or undefined when it was accepted. */
function badFields(body: unknown, creator: Principal): string[] | undefined {
  try {
    parseNewKey(body, creator, now, DEFAULT_RATE);
    return undefined;
  } catch (err) {
    expect(isKairosError(err, 'VALIDATION')).toBe(true);
    return (err as { fields: { field: string }[] }).fields.map((f) => f.field).sort();
  }
}

describe('a new key never gets more than the key that makes it', () => {
  test('scopes, tenant and every bad field are named at once', () => {
    expect(
      parseNewKey({ name: 'ci', scopes: ['jobs:read', 'jobs:read'] }, acmeAdmin, now, DEFAULT_RATE),
    ).toEqual({ name: 'ci', tenant: 'acme', scopes: ['jobs:read'], expiresAt: null, ratePerSec: null });
    expect(
      parseNewKey({ name: 'all', tenant: '*', scopes: ['admin'] }, ANONYMOUS_ADMIN, now, DEFAULT_RATE).tenant,
    ).toBe('*');
    const body = {
      name: '',
      tenant: 'globex',
      scopes: ['nope'],
      expires_at: '2020-01-01T00:00:00Z',
      rate_per_sec: 1.5,
      x: 1,
    };
    expect(badFields(body, acmeAdmin)).toEqual([
      'expires_at',
      'name',
      'rate_per_sec',
      'scopes.0',
      'tenant',
      'x',
    ]);
    // An any-tenant creator must say which tenant.
    expect(badFields({ name: 'x', scopes: ['jobs:read'] }, ANONYMOUS_ADMIN)).toEqual(['tenant']);
    // Scopes the creator lacks: admin is not held by a key of jobs.
    expect(badFields({ name: 'x', scopes: ['jobs:read', 'admin', 'dlq:read'] }, reader)).toEqual([
      'scopes.1',
      'scopes.2',
    ]);
  });

  test('rate: at most the creator’s, the deployment default for a creator without one', () => {
    const rate = (r: unknown, creator: Principal) =>
      parseNewKey(
        { name: 'x', tenant: 'acme', scopes: ['jobs:read'], rate_per_sec: r },
        creator,
        now,
        DEFAULT_RATE,
      ).ratePerSec;
    expect(rate(DEFAULT_RATE, acmeAdmin)).toBe(DEFAULT_RATE);
    expect(
      badFields({ name: 'x', scopes: ['jobs:read'], rate_per_sec: DEFAULT_RATE + 1 }, acmeAdmin),
    ).toEqual(['rate_per_sec']);
    expect(rate(50, boundedAdmin)).toBe(50);
    expect(badFields({ name: 'x', scopes: ['jobs:read'], rate_per_sec: 51 }, boundedAdmin)).toEqual([
      'rate_per_sec',
    ]);
    expect(
      badFields({ name: 'x', scopes: ['jobs:read'], rate_per_sec: 1_000_001 }, ANONYMOUS_ADMIN),
    ).toContain('rate_per_sec');
    // Left out (or null): the default, or the creator's own when lower (a child never outruns it).
    expect(rate(undefined, boundedAdmin)).toBe(50);
    expect(rate(null, boundedAdmin)).toBe(50);
    expect(rate(undefined, acmeAdmin)).toBeNull();
    expect(rate(undefined, { ...acmeAdmin, ratePerSec: 1_000_000 })).toBeNull();
    // A system admin whose key has a high rate of its own may give one that high.
    expect(rate(500_000, { ...ANONYMOUS_ADMIN, ratePerSec: 1_000_000 })).toBe(500_000);
  });

  test('expiry: no later than the creator’s; the creator’s when left out', () => {
    const expiry = (e: unknown, creator: Principal) =>
      parseNewKey({ name: 'x', scopes: ['jobs:read'], expires_at: e }, creator, now, DEFAULT_RATE).expiresAt;
    expect(expiry(inDays(30).toISOString(), boundedAdmin)).toEqual(inDays(30));
    expect(expiry(inDays(1).toISOString(), boundedAdmin)).toEqual(inDays(1));
    expect(
      badFields({ name: 'x', scopes: ['jobs:read'], expires_at: inDays(31).toISOString() }, boundedAdmin),
    ).toEqual(['expires_at']);
    expect(expiry(undefined, boundedAdmin)).toEqual(inDays(30));
    expect(expiry(null, boundedAdmin)).toEqual(inDays(30));
    expect(expiry(undefined, acmeAdmin)).toBeNull();
    expect(expiry(inDays(3650).toISOString(), acmeAdmin)).toEqual(inDays(3650));
  });
});

describe('revoking: cascade is asked for by name', () => {
  test('true, false or left out; anything else is named', () => {
    expect(parseRevokeQuery({})).toEqual({ cascade: false });
    expect(parseRevokeQuery(undefined)).toEqual({ cascade: false });
    expect(parseRevokeQuery({ cascade: 'true' })).toEqual({ cascade: true });
    expect(parseRevokeQuery({ cascade: 'false' })).toEqual({ cascade: false });
    try {
      parseRevokeQuery({ cascade: 'yes', all: '1' });
      expect.unreachable();
    } catch (err) {
      expect(isKairosError(err, 'VALIDATION')).toBe(true);
      expect((err as { fields: { field: string }[] }).fields.map((f) => f.field).sort()).toEqual([
        'all',
        'cascade',
      ]);
    }
  });
});
