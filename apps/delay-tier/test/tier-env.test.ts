import { describe, expect, test } from 'vitest';
import { tierEnv } from '../src/tier-env.js';

describe('delay tier environment', () => {
  test('defaults', () => {
    expect(tierEnv({})).toMatchObject({
      adminPort: 58091,
      lookaheadMs: 3_600_000,
      preDispatchMs: 0,
      versionTtlSeconds: 604_800,
      dispatchConcurrency: 1,
      dispatchMaxSleepMs: 1000,
      preloadMaxIntervalMs: 10_000,
    });
  });

  test('KAIROS_VERSION_TTL_SECONDS is bounded (a minute to a year)', () => {
    expect(tierEnv({ KAIROS_VERSION_TTL_SECONDS: '86400' }).versionTtlSeconds).toBe(86_400);
    expect(() => tierEnv({ KAIROS_VERSION_TTL_SECONDS: '10' })).toThrow(/KAIROS_VERSION_TTL_SECONDS/);
    expect(() => tierEnv({ KAIROS_VERSION_TTL_SECONDS: 'week' })).toThrow(/KAIROS_VERSION_TTL_SECONDS/);
  });

  test('KAIROS_TENANT_WEIGHTS names a tenant and an integer weight', () => {
    expect([...tierEnv({ KAIROS_TENANT_WEIGHTS: 'acme=3, globex=1' }).tenantWeights]).toEqual([
      ['acme', 3],
      ['globex', 1],
    ]);
    expect(() => tierEnv({ KAIROS_TENANT_WEIGHTS: 'acme=0' })).toThrow(/KAIROS_TENANT_WEIGHTS/);
  });
});
