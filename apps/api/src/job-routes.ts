import type { JobCommands } from '@kairos/commands';
import { KairosError, listTenant, parseJobSearch, withKeyTenant } from '@kairos/core';
import { countJobs, jobAttempts, searchJobs, type Pool } from '@kairos/db';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tenantOf, traceparentOf } from './request-context.js';
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
  const write = { config: { scope: 'jobs:write' } } as const;
  const read = { config: { scope: 'jobs:read' } } as const;

  // Shares a transaction with concurrent creates (group commit), answered on its own.
  app.post('/v1/jobs', write, async (req, reply) => {
    const body = withKeyTenant(callerOf(req), req.body);
    const result = await commands.createJob(body, { traceparent: traceparentOf(req) });
    return reply.code(result.created ? 201 : 200).send(jobView(result.job));
  });

  // '::' is a literal colon in a Fastify path (a single ':' starts a parameter).
  app.post('/v1/jobs::batch', write, async (req, reply) => {
    const caller = callerOf(req);
    const jobs = batchJobs(req.body).map((j, i) => withKeyTenant(caller, j, `jobs.${i}`));
    const results = await commands.createJobs(jobs, { pathPrefix: 'jobs', traceparent: traceparentOf(req) });
    return reply.code(201).send({
      jobs: results.map((r) => ({ ...jobView(r.job), created: r.created })),
    });
  });

  // Newest first, cursor-paged; see parseJobSearch for the filters.
  app.get<{ Querystring: Query }>('/v1/jobs', read, async (req) => {
    const search = parseJobSearch(req.query, listTenant(callerOf(req), req.query.tenant));
    const page = await searchJobs(pool, search);
    return { jobs: page.jobs.map(jobView), next_cursor: page.nextCursor };
  });

  app.get<{ Querystring: Query }>('/v1/jobs::counts', read, async (req) => {
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
  });

  app.get('/v1/jobs/:id/attempts', read, async (req: IdRequest) => {
    const job = await commands.getJob(req.params.id, tenantOf(req));
    return { job_id: job.id, attempts: (await jobAttempts(pool, job.id)).map(attemptView) };
  });

  app.get('/v1/jobs/:id', read, async (req: IdRequest) =>
    jobView(await commands.getJob(req.params.id, tenantOf(req))),
  );

  app.delete('/v1/jobs/:id', write, async (req: IdRequest) =>
    jobView(await commands.cancelJob(req.params.id, { ...tenantOf(req), traceparent: traceparentOf(req) })),
  );

  app.post('/v1/jobs/:id/reschedule', write, async (req: IdRequest) =>
    jobView(
      await commands.rescheduleJob(req.params.id, req.body, {
        ...tenantOf(req),
        traceparent: traceparentOf(req),
      }),
    ),
  );
}
