import { describe, expect, test } from 'vitest';
import { ingestEnv } from '../src/ingest-env.js';

describe('ingest environment', () => {
  test('KAIROS_TENANTS: unset or empty allows any tenant; a list is trimmed', () => {
    expect(ingestEnv({}).tenants).toBeUndefined();
    expect(ingestEnv({ KAIROS_TENANTS: ' ' }).tenants).toBeUndefined();
    expect(ingestEnv({ KAIROS_TENANTS: 'acme, globex ,' }).tenants).toEqual(['acme', 'globex']);
    expect(() => ingestEnv({ KAIROS_TENANTS: 'acme,a b' })).toThrow(/KAIROS_TENANTS/);
  });

  test('KAIROS_INGEST_CONCURRENCY defaults to 2 and is bounded', () => {
    expect(ingestEnv({}).partitionsConsumedConcurrently).toBe(2);
    expect(() => ingestEnv({ KAIROS_INGEST_CONCURRENCY: '0' })).toThrow(/KAIROS_INGEST_CONCURRENCY/);
  });

  test('KAIROS_INGEST_METRICS_PORT defaults to 58093 and must be a port', () => {
    expect(ingestEnv({})).toMatchObject({ metricsHost: '127.0.0.1', metricsPort: 58093 });
    expect(ingestEnv({ KAIROS_INGEST_METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(() => ingestEnv({ KAIROS_INGEST_METRICS_PORT: '70000' })).toThrow(/KAIROS_INGEST_METRICS_PORT/);
  });

  test('KAIROS_INGEST_TENANT_SOURCE and KAIROS_INGEST_SOURCE_TENANTS: both or neither', () => {
    expect(ingestEnv({}).tenantSources).toBeUndefined();
    const both = ingestEnv({
      KAIROS_INGEST_TENANT_SOURCE: 'header:kairos-source',
      KAIROS_INGEST_SOURCE_TENANTS: 'b=acme',
    });
    expect(both.tenantSources?.from).toEqual({ header: 'kairos-source' });
    expect(() => ingestEnv({ KAIROS_INGEST_TENANT_SOURCE: 'header:x' })).toThrow(/set both or neither/);
    expect(() =>
      ingestEnv({ KAIROS_INGEST_TENANT_SOURCE: 'x', KAIROS_INGEST_SOURCE_TENANTS: 'b=a' }),
    ).toThrow(/KAIROS_INGEST_TENANT_SOURCE/);
  });
});
