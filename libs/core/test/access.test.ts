import { describe, expect, test } from 'vitest';
import {
  ANONYMOUS_ADMIN,
  isKairosError,
  isSystemAdmin,
  mayAccess,
  requireAccess,
  SCOPES,
  type Principal,
} from '../src/index.js';

const key = (tenant: string, scopes: Principal['scopes']): Principal => ({
  keyId: 'k_1',
  name: 'k',
  tenant,
  scopes,
  ratePerSec: null,
  expiresAt: null,
});

const tenantAdmin = key('acme', ['admin']);
const everyTenantReader = key('*', ['jobs:read']);
const systemAdmin = key('*', ['admin']);

describe('access: a tenant admin administers its tenant, the system admin the deployment', () => {
  test('system actions need admin and every tenant, both', () => {
    expect(isSystemAdmin(systemAdmin)).toBe(true);
    expect(isSystemAdmin(ANONYMOUS_ADMIN)).toBe(true);
    expect(isSystemAdmin(tenantAdmin)).toBe(false);
    expect(isSystemAdmin(everyTenantReader)).toBe(false);
    expect(mayAccess(systemAdmin, 'system')).toBe(true);
    expect(mayAccess(tenantAdmin, 'system')).toBe(false);
    expect(mayAccess(everyTenantReader, 'system')).toBe(false);
  });

  test('a tenant admin keeps every scope of its tenant; others hold what they were given', () => {
    for (const s of SCOPES) {
      expect(mayAccess(tenantAdmin, s), s).toBe(true);
      expect(mayAccess(systemAdmin, s), s).toBe(true);
    }
    expect(mayAccess(everyTenantReader, 'jobs:read')).toBe(true);
    expect(mayAccess(everyTenantReader, 'jobs:write')).toBe(false);
    expect(mayAccess(everyTenantReader, 'admin')).toBe(false);
  });

  test('a refusal is a 403 that says what is missing', () => {
    const refusal = (p: Principal, need: Parameters<typeof requireAccess>[1]) => {
      try {
        requireAccess(p, need);
        return undefined;
      } catch (err) {
        expect(isKairosError(err, 'FORBIDDEN')).toBe(true);
        return (err as Error).message;
      }
    };
    expect(refusal(tenantAdmin, 'system')).toMatch(/admin key of every tenant/);
    expect(refusal(everyTenantReader, 'dlq:replay')).toMatch(/lacks the scope dlq:replay/);
    expect(refusal(systemAdmin, 'system')).toBeUndefined();
    expect(refusal(tenantAdmin, 'admin')).toBeUndefined();
  });
});
