import { KairosError, parseNewKey, scopedTenant, SCOPES, withKeyTenant } from '@kairos/core';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow, type Pool } from '@kairos/db';
import { callerOf, type KeyVerifier } from '@kairos/http';
import type { Logger } from '@kairos/observability';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createdKeySchema, whoamiSchema, type KeyView } from './api-schemas.js';
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

/**
 * API keys, managed with an `admin` key: a tenant admin sees and makes keys of its own tenant
 * only, never with a scope it lacks; only an any-tenant admin makes any-tenant keys.
 */
export function keyRoutes(
  app: FastifyInstance,
  pool: Pool,
  verifier: KeyVerifier | undefined,
  log: Logger,
): void {
  app.post(
    '/v1/keys',
    documented('admin', {
      summary: 'Create an API key (its secret is shown in this answer only)',
      tag: 'keys',
      body: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          tenant: { type: 'string', description: "a tenant or '*'; the creator's tenant when left out" },
          scopes: { type: 'array', items: { enum: [...SCOPES] } },
          expires_at: { type: ['string', 'null'], format: 'date-time' },
          rate_per_sec: { type: ['integer', 'null'] },
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
      const spec = parseNewKey(withKeyTenant(caller, req.body), caller, new Date());
      const { key, row } = await createApiKey(pool, spec, caller.keyId);
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
      summary: 'Revoke an API key',
      tag: 'keys',
      params: ['id'],
      ok: { 200: { description: 'the key, revoked', schema: ref('ApiKey') } },
      errors: [404],
    }),
    async (req: FastifyRequest<{ Params: { id: string } }>) => {
      const caller = callerOf(req);
      // An id that is no key id at all is simply not found (PostgreSQL is not asked).
      const row = /^k_[0-9a-f]{12}$/.test(req.params.id)
        ? await revokeApiKey(pool, req.params.id, scopedTenant(caller), caller.keyId)
        : undefined;
      if (!row) throw new KairosError('NOT_FOUND', `no API key ${req.params.id}`);
      verifier?.forget(row.id);
      log.info({ keyId: row.id, by: caller.keyId }, 'API key revoked');
      return keyView(row);
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
      };
    },
  );
}
