import type { JobCommands } from '@kairos/commands';
import {
  createJobShape,
  jobSearchQuery,
  KairosError,
  listTenant,
  parseJobSearch,
  rescheduleShape,
  withKeyTenant,
} from '@kairos/core';
import { countJobs, jobAttempts, searchJobs, type Pool } from '@kairos/db';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { batchJobsSchema, jobCountsSchema, jobPageSchema } from './api-schemas.js';
import { tenantOf, traceparentOf } from './request-context.js';
import { documented, jsonOf, queryOf, ref, tenantFromKey } from './route-docs.js';
import { attemptView, jobView } from './views.js';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

function batchJobs(body: unknown): unknown[] {
  const b = body as { jobs?: unknown } | null;
  if (!b || typeof b !== 'object' || !Array.isArray(b.jobs)) {
    throw new KairosError('VALIDATION', 'body must be {"jobs": [...]}', {
      fields: [{ field: 'jobs', message: 'must be an array of jobs' }],
    });
  }
  if (b.jobs.length === 0) {
    throw new KairosError('VALIDATION', 'jobs must not be empty', {
      fields: [{ field: 'jobs', message: 'must hold at least one job' }],
    });
  }
  return b.jobs;
}

type Query = Record<string, string | undefined>;

/**
 * One-time jobs: create (one, or a batch), read, search, count, attempts, cancel, reschedule;
 * each scoped to the key's tenant.
 */
export function jobRoutes(app: FastifyInstance, commands: JobCommands, pool: Pool): void {
  const createJob = tenantFromKey(jsonOf(createJobShape, 'input'));
  const one = { description: 'the job', schema: ref('Job') };
  const idParam = ['id'] as const;

  // Shares a transaction with concurrent creates (group commit), answered on its own.
  app.post(
    '/v1/jobs',
    documented('jobs:write', {
      summary: 'Create a job',
      tag: 'jobs',
      body: createJob,
      ok: {
        201: { description: 'created', schema: ref('Job') },
        200: { description: 'the job of a repeated idempotency key', schema: ref('Job') },
      },
      errors: [400, 413, 415],
    }),
    async (req, reply) => {
      const body = withKeyTenant(callerOf(req), req.body);
      const result = await commands.createJob(body, { traceparent: traceparentOf(req) });
      return reply.code(result.created ? 201 : 200).send(jobView(result.job));
    },
  );

  // '::' is a literal colon in a Fastify path (a single ':' starts a parameter).
  app.post(
    '/v1/jobs::batch',
    documented('jobs:write', {
      summary: 'Create up to 1,000 jobs atomically',
      tag: 'jobs',
      body: {
        type: 'object',
        properties: { jobs: { type: 'array', items: createJob, minItems: 1, maxItems: 1000 } },
        required: ['jobs'],
        additionalProperties: false,
      },
      ok: {
        201: {
          description: 'every job, `created: false` for a repeated idempotency key',
          schema: jsonOf(batchJobsSchema),
        },
      },
      errors: [400, 413, 415],
    }),
    async (req, reply) => {
      const caller = callerOf(req);
      const jobs = batchJobs(req.body).map((j, i) => withKeyTenant(caller, j, `jobs.${i}`));
      const results = await commands.createJobs(jobs, {
        pathPrefix: 'jobs',
        traceparent: traceparentOf(req),
      });
      return reply.code(201).send({
        jobs: results.map((r) => ({ ...jobView(r.job), created: r.created })),
      });
    },
  );

  // Newest first, cursor-paged; see parseJobSearch for the filters.
  app.get<{ Querystring: Query }>(
    '/v1/jobs',
    documented('jobs:read', {
      summary: "Search a tenant's jobs, newest first",
      tag: 'jobs',
      query: queryOf(jobSearchQuery),
      ok: { 200: { description: 'one page', schema: jsonOf(jobPageSchema) } },
      errors: [400],
    }),
    async (req) => {
      const search = parseJobSearch(req.query, listTenant(callerOf(req), req.query.tenant));
      const page = await searchJobs(pool, search);
      return { jobs: page.jobs.map(jobView), next_cursor: page.nextCursor };
    },
  );

  app.get<{ Querystring: Query }>(
    '/v1/jobs::counts',
    documented('jobs:read', {
      summary: "A tenant's jobs counted by state and resource class",
      tag: 'jobs',
      query: { type: 'object', properties: { tenant: { type: 'string' } } },
      ok: { 200: { description: 'the counts', schema: jsonOf(jobCountsSchema) } },
      errors: [400],
    }),
    async (req) => {
      const tenant = listTenant(callerOf(req), req.query.tenant);
      if (tenant === undefined) {
        throw new KairosError('VALIDATION', 'tenant is required with a key of every tenant', {
          fields: [{ field: 'tenant', message: 'required: counts are per tenant' }],
        });
      }
      const counts = await countJobs(pool, tenant);
      return {
        tenant,
        total: counts.reduce((n, c) => n + c.count, 0),
        counts: counts.map((c) => ({ state: c.state, resource_class: c.resourceClass, count: c.count })),
      };
    },
  );

  app.get(
    '/v1/jobs/:id/attempts',
    documented('jobs:read', {
      summary: 'Every attempt of a job',
      tag: 'jobs',
      params: idParam,
      ok: {
        200: {
          description: 'the attempts, first first',
          schema: {
            type: 'object',
            properties: { job_id: { type: 'string' }, attempts: { type: 'array', items: ref('Attempt') } },
            required: ['job_id', 'attempts'],
          },
        },
      },
      errors: [400, 404],
    }),
    async (req: IdRequest) => {
      const job = await commands.getJob(req.params.id, tenantOf(req));
      return { job_id: job.id, attempts: (await jobAttempts(pool, job.id)).map(attemptView) };
    },
  );

  app.get(
    '/v1/jobs/:id',
    documented('jobs:read', {
      summary: 'A job',
      tag: 'jobs',
      params: idParam,
      ok: { 200: one },
      errors: [400, 404],
    }),
    async (req: IdRequest) => jobView(await commands.getJob(req.params.id, tenantOf(req))),
  );

  app.delete(
    '/v1/jobs/:id',
    documented('jobs:write', {
      summary: 'Cancel a job that has not finished',
      tag: 'jobs',
      params: idParam,
      ok: { 200: { description: 'the job, CANCELLED', schema: ref('Job') } },
      errors: [400, 404, 409],
    }),
    async (req: IdRequest) =>
      jobView(await commands.cancelJob(req.params.id, { ...tenantOf(req), traceparent: traceparentOf(req) })),
  );

  app.post(
    '/v1/jobs/:id/reschedule',
    documented('jobs:write', {
      summary: 'Move a SCHEDULED job to a new due time',
      tag: 'jobs',
      params: idParam,
      body: jsonOf(rescheduleShape, 'input'),
      ok: { 200: one },
      errors: [400, 404, 409, 413, 415],
    }),
    async (req: IdRequest) =>
      jobView(
        await commands.rescheduleJob(req.params.id, req.body, {
          ...tenantOf(req),
          traceparent: traceparentOf(req),
        }),
      ),
  );
}
