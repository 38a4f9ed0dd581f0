import { describe, expect, test } from 'vitest';
import {
  ANONYMOUS_ADMIN,
  bearerToken,
  formatApiKey,
  hasScope,
  isKairosError,
  listTenant,
  parseApiKey,
  scopedTenant,
  seesTenant,
  withKeyTenant,
  type Principal,
} from '../src/index.js';

const acme: Principal = {
  keyId: 'k_1',
  name: 'acme',
  tenant: 'acme',
  scopes: ['jobs:read'],
  ratePerSec: null,
  expiresAt: null,
};
const acmeAdmin: Principal = { ...acme, scopes: ['admin'] };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return isKairosError(err) ? err.code : 'other';
  }
}

describe('API keys', () => {
  test('a key is kairos_<id>_<secret>; anything else is no key at all', () => {
    const key = formatApiKey({ id: 'k_0123456789ab', secret: 'A'.repeat(43) });
    expect(parseApiKey(key)).toEqual({ id: 'k_0123456789ab', secret: 'A'.repeat(43) });
    for (const bad of [
      '',
      'kairos_',
      `${key}x`,
      key.replace('kairos_', 'kairoz_'),
      'kairos_k_0123_' + 'A'.repeat(43),
    ]) {
      expect(parseApiKey(bad)).toBeUndefined();
    }
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  test('admin holds every scope; the tenant scopes what a key sees', () => {
    expect(hasScope(acme, 'jobs:read')).toBe(true);
    expect(hasScope(acme, 'jobs:write')).toBe(false);
    expect(hasScope(acmeAdmin, 'dlq:replay')).toBe(true);
    expect(seesTenant(acme, 'acme')).toBe(true);
    expect(seesTenant(acme, 'globex')).toBe(false);
    expect(seesTenant(ANONYMOUS_ADMIN, 'globex')).toBe(true);
    expect(scopedTenant(acme)).toBe('acme');
    expect(scopedTenant(ANONYMOUS_ADMIN)).toBeUndefined();
  });

  test('a tenant key fills a missing tenant and refuses another (403); an any-tenant key leaves the body', () => {
    expect(withKeyTenant(acme, { type: 'x' })).toEqual({ type: 'x', tenant: 'acme' });
    expect(withKeyTenant(acme, { tenant: 'acme' })).toEqual({ tenant: 'acme' });
    expect(codeOf(() => withKeyTenant(acme, { tenant: 'globex' }))).toBe('FORBIDDEN');
    expect(withKeyTenant(ANONYMOUS_ADMIN, { tenant: 'globex' })).toEqual({ tenant: 'globex' });
    // Not an object: left for validation to name.
    expect(withKeyTenant(acme, [1])).toEqual([1]);
    expect(listTenant(acme, undefined)).toBe('acme');
    expect(codeOf(() => listTenant(acme, 'globex'))).toBe('FORBIDDEN');
    expect(listTenant(ANONYMOUS_ADMIN, 'globex')).toBe('globex');
  });
});
