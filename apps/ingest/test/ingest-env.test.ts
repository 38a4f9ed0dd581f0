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
});
