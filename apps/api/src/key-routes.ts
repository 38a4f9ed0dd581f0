import {
  KairosError,
  KEY_RATE_MAX,
  parseNewKey,
  parseRevokeQuery,
  scopedTenant,
  SCOPES,
  withKeyTenant,
} from '@kairos/core';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow, type Pool } from '@kairos/db';
import { callerOf, type KeyVerifier } from '@kairos/http';
import type { Logger } from '@kairos/observability';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createdKeySchema, revokedKeySchema, whoamiSchema, type KeyView } from './api-schemas.js';
import { documented, jsonOf, ref } from './route-docs.js';

/** A key as shown after creation and in lists: never its secret or digest. */
export function keyView(k: ApiKeyRow): KeyView {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: k.id,
    name: k.name,
    tenant: k.tenant,
    scopes: [...k.scopes],
    rate_per_sec: k.ratePerSec,
    expires_at: iso(k.expiresAt),
    created_at: k.createdAt.toISOString(),
    created_by: k.createdBy,
    revoked_at: iso(k.revokedAt),
    revoked_by: k.revokedBy,
  };
}

export interface KeyRouteDeps {
  readonly pool: Pool;
  /** Drops revoked keys from this instance's cache; undefined with authentication off. */
  readonly verifier: KeyVerifier | undefined;
  /** The rate of a key without one: the ceiling of the keys such a key makes. */
  readonly defaultRatePerSec: number;
  readonly log: Logger;
}

/**
 * API keys, managed with an `admin` key: a tenant admin sees, makes and revokes keys of its own
 * tenant only; a key it makes never exceeds it (scopes, rate, expiry); only an any-tenant admin
 * makes any-tenant keys.
 */
export function keyRoutes(app: FastifyInstance, deps: KeyRouteDeps): void {
  const { pool, verifier, log } = deps;
  app.post(
    '/v1/keys',
    documented('admin', {
      summary: 'Create an API key (its secret is shown in this answer only)',
      description:
        "A key never gets more than the key that makes it: its tenant (a tenant's admin key makes keys of its own tenant), scopes it holds, a rate and an expiry no higher than its own. 400 names every field beyond them.",
      tag: 'keys',
      body: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          tenant: { type: 'string', description: "a tenant or '*'; the creator's tenant when left out" },
          scopes: {
            type: 'array',
            items: { enum: [...SCOPES] },
            description: 'scopes the creating key holds (`admin` holds them all)',
          },
          expires_at: {
            type: ['string', 'null'],
            format: 'date-time',
            description: "no later than the creating key's expiry; the creator's when left out",
          },
          rate_per_sec: {
            type: ['integer', 'null'],
            minimum: 1,
            maximum: KEY_RATE_MAX,
            description:
              "at most the creating key's rate (the deployment default for a key without one); left out, the default, or the creator's rate when lower",
          },
        },
        required: ['name', 'scopes'],
        additionalProperties: false,
      },
      ok: {
        201: {
          description: 'the key, with `key`: the secret',
          schema: jsonOf(createdKeySchema),
        },
      },
      errors: [400, 413, 415],
    }),
    async (req, reply) => {
      const caller = callerOf(req);
      const body = withKeyTenant(caller, req.body);
      const spec = parseNewKey(body, caller, new Date(), deps.defaultRatePerSec);
      const made = await createApiKey(pool, spec, caller.keyId);
      // Revoked or expired since this instance cached it: a dead key makes nothing.
      if (!made) throw new KairosError('UNAUTHENTICATED', 'this API key was revoked or has expired');
      const { key, row } = made;
      log.info(
        { keyId: row.id, name: row.name, tenant: row.tenant, scopes: row.scopes, by: caller.keyId },
        'API key created',
      );
      // The only answer that ever holds the secret.
      return reply.code(201).send({ ...keyView(row), key });
    },
  );

  app.get(
    '/v1/keys',
    documented('admin', {
      summary: "The keys of the caller's tenant (every key for a key of every tenant)",
      tag: 'keys',
      ok: {
        200: {
          description: 'newest first, revoked ones included',
          schema: {
            type: 'object',
            properties: { keys: { type: 'array', items: ref('ApiKey') } },
            required: ['keys'],
          },
        },
      },
    }),
    async (req) => ({
      keys: (await listApiKeys(pool, scopedTenant(callerOf(req)))).map(keyView),
    }),
  );

  app.delete(
    '/v1/keys/:id',
    documented('admin', {
      summary: 'Revoke an API key (with `cascade=true`, the keys it made too)',
      description:
        'The key stops working at once on this API instance and within the key cache time on the others; its row stays for audit. `cascade=true` also revokes every key it made, directly or through keys it made (`cascaded` lists those revoked now).',
      tag: 'keys',
      params: ['id'],
      query: {
        type: 'object',
        properties: { cascade: { type: 'string', enum: ['true', 'false'], default: 'false' } },
        additionalProperties: false,
      },
      ok: { 200: { description: 'the key, revoked', schema: jsonOf(revokedKeySchema) } },
      errors: [400, 404],
    }),
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const caller = callerOf(req);
      const { cascade } = parseRevokeQuery(req.query);
      // An id that is no key id at all is simply not found (PostgreSQL is not asked).
      const revoked = /^k_[0-9a-f]{12}$/.test(req.params.id)
        ? await revokeApiKey(pool, req.params.id, scopedTenant(caller), caller.keyId, cascade)
        : undefined;
      if (!revoked) throw new KairosError('NOT_FOUND', `no API key ${req.params.id}`);
      const { row, cascaded } = revoked;
      for (const k of [row, ...cascaded]) verifier?.forget(k.id);
      const ids = cascaded.map((k) => k.id);
      log.info({ keyId: row.id, by: caller.keyId, cascaded: ids }, 'API key revoked');
      return { ...keyView(row), cascaded: ids };
    },
  );

  // Which key is calling: lets a CLI or a console check its key without side effects.
  app.get(
    '/v1/whoami',
    documented('any', {
      summary: 'The calling key',
      tag: 'keys',
      ok: { 200: { description: 'who is calling', schema: jsonOf(whoamiSchema) } },
    }),
    (req) => {
      const p = callerOf(req);
      return {
        key_id: p.keyId,
        name: p.name,
        tenant: p.tenant,
        scopes: p.scopes,
        rate_per_sec: p.ratePerSec,
        expires_at: p.expiresAt ? p.expiresAt.toISOString() : null,
      };
    },
  );
}
