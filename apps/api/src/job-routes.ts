import type { JobCommands } from '@kairos/commands';
import { KairosError, withKeyTenant } from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tenantOf, traceparentOf } from './request-context.js';
import { jobView } from './views.js';

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

/** One-time jobs: create (one, or a batch), read, cancel, reschedule; each scoped to the key's tenant. */
export function jobRoutes(app: FastifyInstance, commands: JobCommands): void {
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
