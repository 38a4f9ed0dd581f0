import type { ScheduleCommands } from '@kairos/commands';
import { KairosError, listTenant, withKeyTenant } from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tenantOf, traceparentOf } from './request-context.js';
import { jobView, previewView, scheduleView } from './views.js';

type Query = Record<string, string | undefined>;
type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type IdQueryRequest = FastifyRequest<{ Params: { id: string }; Querystring: Query }>;

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

/** Recurring schedules: create, preview, list, read, change, pause/resume, trigger, backfill, runs. */
export function scheduleRoutes(app: FastifyInstance, schedules: ScheduleCommands): void {
  const write = { config: { scope: 'schedules:write' } } as const;
  const read = { config: { scope: 'schedules:read' } } as const;
  // PATCH bodies are JSON merge patches (RFC 7396); plain JSON is accepted too.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      (err as { statusCode?: number }).statusCode = 400;
      done(err as Error, undefined);
    }
  });

  app.post('/v1/schedules', write, async (req, reply) => {
    const body = withKeyTenant(callerOf(req), req.body);
    const r = await schedules.createSchedule(body, { ...tenantOf(req), traceparent: traceparentOf(req) });
    return reply.code(r.created ? 201 : 200).send(scheduleView(r.schedule));
  });

  // The fire times a schedule would have, without creating it (validates the body like a create).
  app.post<{ Querystring: Query }>('/v1/schedules::preview', read, (req) => ({
    fire_times: schedules.previewSpec(withKeyTenant(callerOf(req), req.body), req.query).map(previewView),
  }));

  app.get<{ Querystring: Query }>('/v1/schedules', read, async (req) => {
    const tenant = listTenant(callerOf(req), req.query.tenant);
    const page = await schedules.listSchedules(tenant, req.query);
    return { schedules: page.schedules.map(scheduleView), next_after: page.nextAfter };
  });

  app.get('/v1/schedules/:id', read, async (req: IdRequest) =>
    scheduleView(await schedules.getSchedule(req.params.id, tenantOf(req))),
  );

  const update = (merge: boolean) => async (req: IdRequest) => {
    const version = expectedVersion(req.headers['if-match']);
    return scheduleView(
      await schedules.updateSchedule(req.params.id, withKeyTenant(callerOf(req), req.body), {
        merge,
        ...tenantOf(req),
        ...(version === undefined ? {} : { expectedVersion: version }),
      }),
    );
  };
  app.put('/v1/schedules/:id', write, update(false));
  app.patch('/v1/schedules/:id', write, update(true));

  app.delete('/v1/schedules/:id', write, async (req: IdRequest) =>
    scheduleView(await schedules.deleteSchedule(req.params.id, tenantOf(req))),
  );

  app.post('/v1/schedules/:id/pause', write, async (req: IdRequest) =>
    scheduleView(await schedules.pauseSchedule(req.params.id, tenantOf(req))),
  );

  app.post('/v1/schedules/:id/resume', write, async (req: IdRequest) =>
    scheduleView(await schedules.resumeSchedule(req.params.id, req.body ?? {}, tenantOf(req))),
  );

  app.post('/v1/schedules/:id/trigger', write, async (req: IdRequest, reply) => {
    const r = await schedules.triggerNow(req.params.id, req.body ?? {}, {
      ...tenantOf(req),
      traceparent: traceparentOf(req),
    });
    return reply.code(r.created ? 201 : 200).send(jobView(r.job));
  });

  app.post('/v1/schedules/:id/backfill', write, async (req: IdRequest, reply) => {
    const r = await schedules.backfill(req.params.id, req.body, {
      ...tenantOf(req),
      traceparent: traceparentOf(req),
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

  app.get('/v1/schedules/:id/preview', read, async (req: IdQueryRequest) => {
    const r = await schedules.preview(req.params.id, req.query, tenantOf(req));
    return {
      schedule_id: r.schedule.id,
      time_zone: r.schedule.timeZone,
      state: r.schedule.state,
      fire_times: r.entries.map(previewView),
    };
  });

  app.get('/v1/schedules/:id/runs', read, async (req: IdQueryRequest) => ({
    runs: (await schedules.runs(req.params.id, req.query, tenantOf(req))).map(jobView),
  }));
}
