import type { JobCommands } from '@kairos/commands';
import { describe, expect, test } from 'vitest';
import { compileIngestOptions, type IngestOptions } from '../src/options.js';

// Only what option validation reads; the ingest is never started here.
const base = {
  commands: { limits: { maxBatch: 1000 } } as unknown as JobCommands,
} as unknown as IngestOptions;

describe('ingest options', () => {
  test('defaults', () => {
    const o = compileIngestOptions({ ...base, instanceId: 'i1' });
    expect(o).toMatchObject({
      groupId: 'kairos-ingest',
      transactionalId: 'kairos-ingest-i1',
      tenants: undefined,
      partitionsConsumedConcurrently: 2,
      maxCreatesPerTransaction: 1000,
      internalErrorAttempts: 5,
      initialBackoffMs: 100,
      maxBackoffMs: 5000,
    });
  });

  test.each([
    [{ tenants: [] }, /tenants/],
    [{ tenants: ['acme', ' '] }, /tenants/],
    [{ groupId: '' }, /groupId/],
    [{ maxCreatesPerTransaction: 1001 }, /maxCreatesPerTransaction/],
    [{ partitionsConsumedConcurrently: 0 }, /partitionsConsumedConcurrently/],
    [{ initialBackoffMs: 500, maxBackoffMs: 100 }, /maxBackoffMs/],
    [{ internalErrorAttempts: 1.5 }, /internalErrorAttempts/],
  ])('rejects %j', (extra, message) => {
    expect(() => compileIngestOptions({ ...base, ...extra })).toThrow(message);
  });
});
