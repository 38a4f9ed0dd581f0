import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { formatApiKey, isScope, type NewKeySpec, type Principal, type Scope } from '@kairos/core';
import type pg from 'pg';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** An API key as stored (its secret only as a digest). */
export interface ApiKeyRow {
  readonly id: string;
  readonly name: string;
  readonly tenant: string;
  readonly scopes: readonly Scope[];
  readonly ratePerSec: number | null;
  readonly expiresAt: Date | null;
  readonly createdAt: Date;
  readonly createdBy: string;
  readonly revokedAt: Date | null;
  readonly revokedBy: string | null;
}

interface Row {
  id: string;
  name: string;
  tenant_id: string;
  scopes: string[];
  secret_hash: Buffer;
  rate_per_sec: number | null;
  expires_at: Date | null;
  created_at: Date;
  created_by: string;
  revoked_at: Date | null;
  revoked_by: string | null;
}

const COLUMNS =
  'id, name, tenant_id, scopes, secret_hash, rate_per_sec, expires_at, created_at, created_by, revoked_at, revoked_by';

const toKey = (r: Row): ApiKeyRow => ({
  id: r.id,
  name: r.name,
  tenant: r.tenant_id,
  // A scope a later version dropped is ignored rather than trusted.
  scopes: r.scopes.filter(isScope),
  ratePerSec: r.rate_per_sec,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  createdBy: r.created_by,
  revokedAt: r.revoked_at,
  revokedBy: r.revoked_by,
});

const digest = (secret: string) => createHash('sha256').update(secret).digest();

/**
 * Stores a new key and returns it whole: the only time its secret exists outside the caller.
 * Undefined when `createdBy` is a key (`k_…`) that PostgreSQL no longer holds live (revoked or
 * expired): an API instance may still trust a revoked key for its cache time, and a revoked key
 * must not mint children that a cascade has already passed by.
 */
export async function createApiKey(
  db: Queryable,
  spec: NewKeySpec,
  createdBy: string,
): Promise<{ key: string; row: ApiKeyRow } | undefined> {
  const id = `k_${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const r = await db.query<Row>(
    `INSERT INTO api_keys (id, name, tenant_id, scopes, secret_hash, rate_per_sec, expires_at, created_by)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8
      WHERE $8 !~ '^k_' OR EXISTS (
        SELECT 1 FROM api_keys c WHERE c.id = $8 AND c.revoked_at IS NULL
           AND (c.expires_at IS NULL OR c.expires_at > now()))
     RETURNING ${COLUMNS}`,
    [id, spec.name, spec.tenant, spec.scopes, digest(secret), spec.ratePerSec, spec.expiresAt, createdBy],
  );
  const row = r.rows[0];
  return row && { key: formatApiKey({ id, secret }), row: toKey(row) };
}

/** Keys of one tenant (undefined: every tenant), newest first, revoked ones included. */
export async function listApiKeys(db: Queryable, tenant: string | undefined): Promise<ApiKeyRow[]> {
  const r = await db.query<Row>(
    `SELECT ${COLUMNS} FROM api_keys WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY created_at DESC, id`,
    [tenant ?? null],
  );
  return r.rows.map(toKey);
}

/** A revoked key and the keys revoked with it. */
export interface Revoked {
  readonly row: ApiKeyRow;
  /** Keys it made, directly or through others, that this revocation ended (cascade only). */
  readonly cascaded: readonly ApiKeyRow[];
}

/**
 * Revokes a key of the tenant (undefined: any tenant) and, with `cascade`, every key it made,
 * transitively (through `created_by`, keys already revoked included, since a revoked key's
 * children live on otherwise). Returns the key (already revoked ones unchanged) with the keys
 * revoked now, or undefined when there is no such key for this tenant. A key of the tree that
 * another API instance still trusts (its cache time) can make no key after this: createApiKey
 * asks PostgreSQL whether the creator is live.
 */
export async function revokeApiKey(
  db: Queryable,
  id: string,
  tenant: string | undefined,
  revokedBy: string,
  cascade = false,
): Promise<Revoked | undefined> {
  const r = await db.query<Row & { was_live: boolean }>(
    `WITH RECURSIVE tree AS (
       SELECT id FROM api_keys WHERE id = $1 AND ($2::text IS NULL OR tenant_id = $2)
       UNION
       SELECT k.id FROM api_keys k JOIN tree t ON k.created_by = t.id
        WHERE $4 AND ($2::text IS NULL OR k.tenant_id = $2)
     ), before AS (
       SELECT k.id, k.revoked_at IS NULL AS was_live FROM api_keys k JOIN tree USING (id)
     )
     UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()), revoked_by = coalesce(revoked_by, $3)
       FROM before WHERE api_keys.id = before.id
     RETURNING ${COLUMNS.split(', ')
       .map((c) => `api_keys.${c}`)
       .join(', ')}, before.was_live`,
    [id, tenant ?? null, revokedBy, cascade],
  );
  const root = r.rows.find((x) => x.id === id);
  if (!root) return undefined;
  const cascaded = r.rows.filter((x) => x.id !== id && x.was_live).map(toKey);
  return { row: toKey(root), cascaded };
}

/** A stored key and the digest its secret must match. */
export interface StoredKey {
  readonly row: ApiKeyRow;
  readonly secretHash: Buffer;
}

export async function findApiKey(db: Queryable, id: string): Promise<StoredKey | undefined> {
  const r = await db.query<Row>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
  const row = r.rows[0];
  return row && { row: toKey(row), secretHash: row.secret_hash };
}

/** The principal a presented secret proves, or undefined (wrong secret, revoked, expired). */
export function principalOf(stored: StoredKey, secret: string, now: Date): Principal | undefined {
  if (!timingSafeEqual(digest(secret), stored.secretHash)) return undefined;
  const { row } = stored;
  if (row.revokedAt !== null && row.revokedAt.getTime() <= now.getTime()) return undefined;
  if (row.expiresAt !== null && row.expiresAt.getTime() <= now.getTime()) return undefined;
  return {
    keyId: row.id,
    name: row.name,
    tenant: row.tenant,
    scopes: row.scopes,
    ratePerSec: row.ratePerSec,
    expiresAt: row.expiresAt,
  };
}
