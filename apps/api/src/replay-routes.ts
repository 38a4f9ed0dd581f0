import type { Replays } from '@kairos/commands';
import { fieldErrorsOf, KairosError, listTenant, parseJobSearch, scopedTenant } from '@kairos/core';
import type { Replay } from '@kairos/db';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { replaySchema } from './api-schemas.js';
import { tenantOf } from './request-context.js';
import { documented, jsonOf, ref } from './route-docs.js';
import { jobView } from './views.js';

/** Default and ceiling of a replay's rate: low by default, so a replay never floods the workers. */
export const DEFAULT_REPLAY_RATE = 10;
export const MAX_REPLAY_RATE = 1000;

/** The body of POST /v1/dead-letters:replay. */
export const replayBody = z
  .object({
    /** The dead letters to replay: the filters of the dead-letter list (strings, as in its query). */
    filter: z.record(z.string(), z.string()).default({}),
    /** True (the default): only show what would be replayed. */
    dry_run: z.boolean().default(true),
    rate_per_sec: z.number().int().min(1).max(MAX_REPLAY_RATE).default(DEFAULT_REPLAY_RATE),
  })
  .strict();

export function replayView(r: Replay) {
  return {
    id: r.id,
    tenant: r.tenant,
    filter: r.filter,
    rate_per_sec: r.ratePerSec,
    state: r.state,
    selected: r.selected,
    replayed: r.replayed,
    created_by: r.createdBy,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

function parseBody(body: unknown) {
  const parsed = replayBody.safeParse(body ?? {});
  if (!parsed.success) {
    throw new KairosError('VALIDATION', 'invalid replay', {
      fields: fieldErrorsOf(parsed.error),
    });
  }
  if ('state' in parsed.data.filter) {
    throw new KairosError('VALIDATION', 'dead letters are FAILED jobs', {
      fields: [{ field: 'filter.state', message: 'not a filter here: every dead letter is FAILED' }],
    });
  }
  return parsed.data;
}

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/** Replays of dead letters (dry run first), their progress and audit, cancel; re-runs of finished jobs. */
export function replayRoutes(app: FastifyInstance, replays: Replays): void {
  const replay = { description: 'the replay', schema: ref('Replay') };
  app.post(
    '/v1/dead-letters::replay',
    documented('dlq:replay', {
      summary: 'Replay dead letters as new jobs: a dry run unless dry_run is false',
      tag: 'dead letters',
      body: jsonOf(replayBody, 'input'),
      ok: {
        200: {
          description: 'the dry run: what would be replayed; nothing changed',
          schema: jsonOf(replayPreviewSchema),
        },
        202: { description: 'the replay, running', schema: ref('Replay') },
      },
      errors: [400, 413, 415],
    }),
    async (req, reply) => {
      const body = parseBody(req.body);
      const caller = callerOf(req);
      const search = parseJobSearch({ ...body.filter, limit: '1' }, listTenant(caller, body.filter.tenant));
      if (body.dry_run) {
        const p = await replays.preview(search);
        return reply.code(200).send({
          dry_run: true,
          total: p.total,
          groups: p.groups.map((g) => ({
            type: g.type,
            resource_class: g.resourceClass,
            tenant: g.tenant,
            count: g.count,
          })),
          sample: p.sample,
        });
      }
      const r = await replays.create(search, body.filter, body.rate_per_sec, caller.keyId);
      return reply.code(202).header('location', `/v1/replays/${r.id}`).send(replayView(r));
    },
  );

  app.get(
    '/v1/replays',
    documented('dlq:read', {
      summary: 'Replays, newest first',
      tag: 'dead letters',
      ok: {
        200: {
          description: 'the replays',
          schema: {
            type: 'object',
            properties: { replays: { type: 'array', items: ref('Replay') } },
            required: ['replays'],
          },
        },
      },
    }),
    async (req) => ({ replays: (await replays.list(scopedTenant(callerOf(req)))).map(replayView) }),
  );

  app.get(
    '/v1/replays/:id',
    documented('dlq:read', {
      summary: 'A replay: its progress and its audit trail',
      tag: 'dead letters',
      params: ['id'],
      ok: {
        200: { description: 'the replay and every action on it', schema: jsonOf(replayWithAuditSchema) },
      },
      errors: [404],
    }),
    async (req: IdRequest) => {
      const { replay: r, audit } = await replays.get(req.params.id, scopedTenant(callerOf(req)));
      return {
        ...replayView(r),
        audit: audit.map((a) => ({
          action: a.action,
          actor: a.actor,
          at: a.at.toISOString(),
          detail: a.detail,
        })),
      };
    },
  );

  app.post(
    '/v1/replays/:id/cancel',
    documented('dlq:replay', {
      summary: 'Cancel a running replay (what was replayed stays)',
      tag: 'dead letters',
      params: ['id'],
      ok: { 200: replay },
      errors: [404, 409],
    }),
    async (req: IdRequest) =>
      replayView(await replays.cancel(req.params.id, scopedTenant(callerOf(req)), callerOf(req).keyId)),
  );

  app.post(
    '/v1/jobs/:id/rerun',
    documented('jobs:write', {
      summary: 'Run a finished job again, as a new job (replay_of the original)',
      tag: 'jobs',
      params: ['id'],
      ok: { 201: { description: 'the new job', schema: ref('Job') } },
      errors: [400, 404, 409],
    }),
    async (req: IdRequest, reply) =>
      reply.code(201).send(jobView(await replays.rerun(req.params.id, tenantOf(req).tenantId))),
  );
}

const replayPreviewSchema = z.object({
  dry_run: z.literal(true),
  total: z.number().int(),
  groups: z.array(
    z.object({ type: z.string(), resource_class: z.string(), tenant: z.string(), count: z.number().int() }),
  ),
  sample: z.array(z.uuid()),
});

const replayWithAuditSchema = replaySchema.extend({
  audit: z.array(
    z.object({
      action: z.string(),
      actor: z.string(),
      at: z.iso.datetime(),
      detail: z.record(z.string(), z.unknown()),
    }),
  ),
});
