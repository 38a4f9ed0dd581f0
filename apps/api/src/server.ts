import type { JobCommands, ScheduleCommands } from '@kairos/commands';
import { KairosError } from '@kairos/core';
import { silentLogger, type Logger } from '@kairos/observability';
import Fastify, { type FastifyInstance } from 'fastify';
import { sendProblem, toProblem } from './problem.js';
import { jobView, previewView, scheduleView } from './views.js';

export interface ApiOptions {
  readonly commands: JobCommands;
  /** Recurring schedules (the /v1/schedules routes exist only when given). */
  readonly schedules?: ScheduleCommands;
  readonly log?: Logger;
  /** Largest request body in bytes. Default: 8 MiB (a full batch of large payloads). */
  readonly bodyLimit?: number;
}

/**
 * Builds the HTTP API (not listening yet): jobs create/batch/get/cancel/reschedule, recurring
 * schedules, and health.
 */
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

  // Shares a transaction with concurrent creates (group commit), answered on its own.
  app.post('/v1/jobs', async (req, reply) => {
    const result = await commands.createJob(req.body, { traceparent: traceparent(req.headers.traceparent) });
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

  if (options.schedules) scheduleRoutes(app, options.schedules);

  app.get('/healthz', () => ({ status: 'ok' }));
  return app;
}

type Query = Record<string, string | undefined>;

/** `If-Match: "3"` or `If-Match: 3`: the version the client read. */
function expectedVersion(header: unknown): number | undefined {
  if (typeof header !== 'string') return undefined;
  const v = Number(header.replace(/^W\//, '').replaceAll('"', '').trim());
  if (!Number.isInteger(v) || v < 1) {
    throw new KairosError('VALIDATION', 'If-Match must be a schedule version', {
      fields: [{ field: 'if-match', message: 'a schedule version, e.g. "3"' }],
    });
  }
  return v;
}

function scheduleRoutes(app: FastifyInstance, schedules: ScheduleCommands): void {
  const traceparent = (h: unknown) => (typeof h === 'string' ? h : null);
  // PATCH bodies are JSON merge patches (RFC 7396); plain JSON is accepted too.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      (err as { statusCode?: number }).statusCode = 400;
      done(err as Error, undefined);
    }
  });

  app.post('/v1/schedules', async (req, reply) => {
    const r = await schedules.createSchedule(req.body, { traceparent: traceparent(req.headers.traceparent) });
    return reply.code(r.created ? 201 : 200).send(scheduleView(r.schedule));
  });

  // The fire times a schedule would have, without creating it (validates the body like a create).
  app.post<{ Querystring: Query }>('/v1/schedules::preview', (req) => ({
    fire_times: schedules.previewSpec(req.body, req.query).map(previewView),
  }));

  app.get<{ Querystring: Query }>('/v1/schedules', async (req) => {
    const page = await schedules.listSchedules(req.query.tenant, req.query);
    return { schedules: page.schedules.map(scheduleView), next_after: page.nextAfter };
  });

  app.get<{ Params: { id: string } }>('/v1/schedules/:id', async (req) =>
    scheduleView(await schedules.getSchedule(req.params.id)),
  );

  const update =
    (merge: boolean) =>
    async (req: { params: { id: string }; body: unknown; headers: Record<string, unknown> }) => {
      const version = expectedVersion(req.headers['if-match']);
      return scheduleView(
        await schedules.updateSchedule(req.params.id, req.body, {
          merge,
          ...(version === undefined ? {} : { expectedVersion: version }),
        }),
      );
    };
  app.put<{ Params: { id: string } }>('/v1/schedules/:id', update(false));
  app.patch<{ Params: { id: string } }>('/v1/schedules/:id', update(true));

  app.delete<{ Params: { id: string } }>('/v1/schedules/:id', async (req) =>
    scheduleView(await schedules.deleteSchedule(req.params.id)),
  );

  app.post<{ Params: { id: string } }>('/v1/schedules/:id/pause', async (req) =>
    scheduleView(await schedules.pauseSchedule(req.params.id)),
  );

  app.post<{ Params: { id: string } }>('/v1/schedules/:id/resume', async (req) =>
    scheduleView(await schedules.resumeSchedule(req.params.id, req.body ?? {})),
  );

  app.post<{ Params: { id: string } }>('/v1/schedules/:id/trigger', async (req, reply) => {
    const r = await schedules.triggerNow(req.params.id, req.body ?? {}, {
      traceparent: traceparent(req.headers.traceparent),
    });
    return reply.code(r.created ? 201 : 200).send(jobView(r.job));
  });

  app.post<{ Params: { id: string } }>('/v1/schedules/:id/backfill', async (req, reply) => {
    const r = await schedules.backfill(req.params.id, req.body, {
      traceparent: traceparent(req.headers.traceparent),
    });
    const due = r.created.map((j) => j.dueAt.getTime());
    return reply.code(r.created.length > 0 ? 201 : 200).send({
      schedule_id: r.schedule.id,
      requested: r.requested,
      created: r.created.length,
      already_backfilled: r.requested - r.created.length,
      rate_per_sec: r.ratePerSec,
      first_due_at: due.length > 0 ? new Date(Math.min(...due)).toISOString() : null,
      last_due_at: due.length > 0 ? new Date(Math.max(...due)).toISOString() : null,
      runs: r.created.map((j) => ({
        job_id: j.id,
        occurrence_id: j.occurrence?.occurrenceId ?? null,
        occurrence_at: j.occurrence?.occurrenceAt.toISOString() ?? null,
        due_at: j.dueAt.toISOString(),
      })),
    });
  });

  app.get<{ Params: { id: string }; Querystring: Query }>('/v1/schedules/:id/preview', async (req) => {
    const r = await schedules.preview(req.params.id, req.query);
    return {
      schedule_id: r.schedule.id,
      time_zone: r.schedule.timeZone,
      state: r.schedule.state,
      fire_times: r.entries.map(previewView),
    };
  });

  app.get<{ Params: { id: string }; Querystring: Query }>('/v1/schedules/:id/runs', async (req) => ({
    runs: (await schedules.runs(req.params.id, req.query)).map(jobView),
  }));
}
