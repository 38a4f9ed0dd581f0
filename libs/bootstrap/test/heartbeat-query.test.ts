import { resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { heartbeatQueryFor, readConnectorFiles } from '../src/connectors.js';

// The production connector file's heartbeat action query (it deletes old heartbeats from the
// outbox and inserts a new one there), re-pointed at a deployment's schema.
const file = readConnectorFiles(resolve(import.meta.dirname, '../../../connectors')).find(
  (c) => c.name === 'kairos-outbox',
);
const QUERY = file?.config['heartbeat.action.query'] ?? '';

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('the heartbeat action query aimed at a schema', () => {
  test('the connector file names public.outbox twice (the delete and the insert)', () => {
    expect(count(QUERY, 'public.outbox')).toBe(2);
  });

  test('another schema: both references name its outbox, quoted', () => {
    const q = heartbeatQueryFor({ 'heartbeat.action.query': QUERY }, 'billing')['heartbeat.action.query'];
    expect(q).toBeDefined();
    expect(count(q!, '"billing".outbox')).toBe(2);
    expect(q).not.toContain('public.outbox');
    expect(q!.replaceAll('"billing".outbox', 'public.outbox')).toBe(QUERY);
  });

  test('a double quote in the schema name is doubled, so the name cannot end the identifier', () => {
    const q = heartbeatQueryFor({ 'heartbeat.action.query': QUERY }, 'a"b; DROP TABLE jobs; --');
    expect(count(q['heartbeat.action.query']!, '"a""b; DROP TABLE jobs; --".outbox')).toBe(2);
  });

  test('no action query, or the public schema the file already names: nothing to change', () => {
    expect(heartbeatQueryFor({ 'heartbeat.interval.ms': '5000' }, 'billing')).toEqual({});
    expect(heartbeatQueryFor({ 'heartbeat.action.query': QUERY }, 'public')).toEqual({});
  });
});
