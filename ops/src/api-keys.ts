import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseApiKey, type Scope } from '@kairos/core';
import { createApiKey, findApiKey, principalOf, type Pool } from '@kairos/db';

/** An admin key of every tenant, for a test, a benchmark or the local stack (no rate limit to speak of). */
export async function createAdminKey(
  pool: Pool,
  name: string,
  scopes: readonly Scope[] = ['admin'],
): Promise<string> {
  const made = await createApiKey(
    pool,
    { name, tenant: '*', scopes, expiresAt: null, ratePerSec: 1_000_000 },
    'bootstrap',
  );
  // Only a key (k_…) as creator can be refused.
  if (!made) throw new Error('createApiKey refused a bootstrap key');
  return made.key;
}

/** Where `npm start` keeps the local stack's admin key (owner-readable only). */
export const localKeyFile = (dataDir: string) => resolve(dataDir, 'api-key');

/**
 * The local stack's admin key: the one `npm start` made before while PostgreSQL still holds it
 * valid, else a new one (after a reset, or if it was revoked). Kept in `.kairos/api-key`, mode 0600.
 */
export async function ensureLocalKey(
  pool: Pool,
  dataDir: string,
): Promise<{ key: string; created: boolean }> {
  const file = localKeyFile(dataDir);
  const held = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  const parts = parseApiKey(held);
  const stored = parts && (await findApiKey(pool, parts.id));
  if (parts && stored && principalOf(stored, parts.secret, new Date())) return { key: held, created: false };
  const key = await createAdminKey(pool, 'local-admin');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { key, created: true };
}
