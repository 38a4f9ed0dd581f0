import type { JobCommands } from '@kairos/commands';
import { KairosError } from '@kairos/core';
import { silentLogger, type Logger } from '@kairos/observability';
import Fastify, { type FastifyInstance } from 'fastify';
import { sendProblem, toProblem } from './problem.js';
import { jobView } from './views.js';

export interface ApiOptions {
  readonly commands: JobCommands;
  readonly log?: Logger;
  /** Largest request body in bytes. Default: 8 MiB (a full batch of large payloads). */
  readonly bodyLimit?: number;
}

/** Builds the HTTP API (not listening yet): jobs create/batch/get/cancel/reschedule and health. */
export function createApiServer(options: ApiOptions): FastifyInstance {
  const log = options.log ?? silentLogger();
  const app = Fastify({ bodyLimit: options.bodyLimit ?? 8 * 1024 * 1024, logger: false });
  const { commands } = options;

  app.setErrorHandler((err, _req, reply) => {
    const problem = toProblem(err);
    if (problem.status >= 500) log.error({ err }, 'request failed');
    return sendProblem(reply, problem);
  });
  app.setNotFoundHandler((req, reply) =>
    sendProblem(reply, {
      type: 'https://kairos.dev/problems/not-found',
      title: 'NOT_FOUND',
      status: 404,
      detail: `no route ${req.method} ${req.url}`,
      code: 'NOT_FOUND',
    }),
  );

  const traceparent = (h: unknown) => (typeof h === 'string' ? h : null);

  app.post('/v1/jobs', async (req, reply) => {
    const [result] = await commands.createJobs([req.body], {
      traceparent: traceparent(req.headers.traceparent),
    });
    if (!result) throw new Error('no result for a one-job request');
    return reply.code(result.created ? 201 : 200).send(jobView(result.job));
  });

  // '::' is a literal colon in a Fastify path (a single ':' starts a parameter).
  app.post('/v1/jobs::batch', async (req, reply) => {
    const body = req.body as { jobs?: unknown } | null;
    if (!body || typeof body !== 'object' || !Array.isArray(body.jobs)) {
      throw new KairosError('VALIDATION', 'body must be {"jobs": [...]}', {
        fields: [{ field: 'jobs', message: 'must be an array of jobs' }],
      });
    }
    if (body.jobs.length === 0) {
      throw new KairosError('VALIDATION', 'jobs must not be empty', {
        fields: [{ field: 'jobs', message: 'must hold at least one job' }],
      });
    }
    const results = await commands.createJobs(body.jobs, {
      pathPrefix: 'jobs',
      traceparent: traceparent(req.headers.traceparent),
    });
    return reply.code(201).send({
      jobs: results.map((r) => ({ ...jobView(r.job), created: r.created })),
    });
  });

  app.get<{ Params: { id: string } }>('/v1/jobs/:id', async (req) =>
    jobView(await commands.getJob(req.params.id)),
  );

  app.delete<{ Params: { id: string } }>('/v1/jobs/:id', async (req) =>
    jobView(await commands.cancelJob(req.params.id, { traceparent: traceparent(req.headers.traceparent) })),
  );

  app.post<{ Params: { id: string } }>('/v1/jobs/:id/reschedule', async (req) =>
    jobView(
      await commands.rescheduleJob(req.params.id, req.body, {
        traceparent: traceparent(req.headers.traceparent),
      }),
    ),
  );

  app.get('/healthz', () => ({ status: 'ok' }));
  return app;
}
