import { expect, test } from 'vitest';
import { parseTenantSources, sourceOf, tenantRefusal } from '../src/tenant-policy.js';

const msg = (key: string | null, headers: Record<string, string> = {}) => ({
  key: key === null ? null : Buffer.from(key),
  headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
});

test('a header names the sender; each sender may name only its tenants', () => {
  const sources = parseTenantSources('header:kairos-source', 'billing=acme|acme-eu; payments=globex');
  expect(sourceOf(sources, msg('k', { 'kairos-source': 'billing' }))).toBe('billing');
  expect(
    tenantRefusal('acme-eu', msg('k', { 'kairos-source': 'billing' }), undefined, sources),
  ).toBeUndefined();
  expect(
    tenantRefusal('globex', msg('k', { 'kairos-source': 'billing' }), undefined, sources)?.message,
  ).toMatch(/source "billing" may not send requests for tenant "globex"/);
  expect(tenantRefusal('acme', msg('k', { 'kairos-source': 'intruder' }), undefined, sources)?.reason).toBe(
    'UNKNOWN_TENANT',
  );
  expect(tenantRefusal('acme', msg('k'), undefined, sources)?.message).toMatch(/names no source/);
});

test('or the key prefix up to a separator; the global allow-list applies first', () => {
  const sources = parseTenantSources('key-prefix:/', 'billing=acme');
  expect(sourceOf(sources, msg('billing/order-42'))).toBe('billing');
  expect(sourceOf(sources, msg('/order-42'))).toBeUndefined();
  expect(sourceOf(sources, msg(null))).toBeUndefined();
  expect(tenantRefusal('acme', msg('billing/1'), new Set(['acme']), sources)).toBeUndefined();
  expect(tenantRefusal('acme', msg('billing/1'), new Set(['globex']), sources)?.message).toMatch(
    /may not send requests here/,
  );
  expect(tenantRefusal('acme', msg('anything'), undefined, undefined)).toBeUndefined();
});

test('bad settings are named', () => {
  expect(() => parseTenantSources('topic:x', 'a=b')).toThrow(/header:<name> or key-prefix/);
  expect(() => parseTenantSources('header:x', 'a=')).toThrow(/source=tenant/);
  expect(() => parseTenantSources('header:x', ' ; ')).toThrow(/at least one source/);
});
