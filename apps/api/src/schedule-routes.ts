import type { ScheduleCommands } from '@kairos/commands';
import {
  KairosError,
  listTenant,
  scheduleShapeFor,
  withKeyTenant,
  type JobLimits,
  type Schedule,
} from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tenantOf, traceparentOf } from './request-context.js';
import { documented, jsonOf, ref, tenantFromKey, type RouteDoc } from './route-docs.js';
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

const backfillSchema = {
  type: 'object',
  properties: {
    schedule_id: { type: 'string' },
    requested: { type: 'integer' },
    created: { type: 'integer' },
    already_backfilled: { type: 'integer' },
    rate_per_sec: { type: 'number' },
    first_due_at: { type: ['string', 'null'] },
    last_due_at: { type: ['string', 'null'] },
    runs: { type: 'array', items: { type: 'object' } },
  },
  required: ['schedule_id', 'requested', 'created', 'already_backfilled', 'rate_per_sec', 'runs'],
};

/** Recurring schedules: create, preview, list, read, change, pause/resume, trigger, backfill, runs. */
export function scheduleRoutes(app: FastifyInstance, schedules: ScheduleCommands, limits: JobLimits): void {
  // Schedules as answered: with what happened to their runs (one query per answer).
  const viewsOf = async (list: readonly Schedule[]) => {
    const facts = await schedules.runFacts(list.map((x) => x.id));
    return list.map((x) => scheduleView(x, facts.get(x.id)));
  };
  const viewOf = async (x: Schedule) => scheduleView(x, (await schedules.runFacts([x.id])).get(x.id));
  const spec = tenantFromKey(jsonOf(scheduleShapeFor(limits), 'input'));
  const id = ['id'] as const;
  const schedule = { description: 'the schedule', schema: ref('Schedule') };
  const fireTimes = {
    type: 'object',
    properties: { fire_times: { type: 'array', items: ref('FireTime') } },
    required: ['fire_times'],
  };
  const previewQuery = {
    type: 'object',
    properties: {
      count: { type: 'string', description: '1–100, default 10' },
      after: { type: 'string', format: 'date-time' },
    },
  };
  const write = (summary: string, o: Partial<RouteDoc> = {}) =>
    documented('schedules:write', {
      summary,
      tag: 'schedules',
      params: id,
      ok: { 200: schedule },
      errors: [400, 404, 409],
      ...o,
    });
  const read = (summary: string, o: Partial<RouteDoc> = {}) =>
    documented('schedules:read', {
      summary,
      tag: 'schedules',
      params: id,
      ok: { 200: schedule },
      errors: [400, 404],
      ...o,
    });
  const bodyErrors = [400, 404, 409, 413, 415] as const;
  // PATCH bodies are JSON merge patches (RFC 7396); plain JSON is accepted too.
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      (err as { statusCode?: number }).statusCode = 400;
      done(err as Error, undefined);
    }
  });

  app.post(
    '/v1/schedules',
    write('Create a recurring schedule', {
      params: [],
      body: spec,
      ok: {
        201: { description: 'created', schema: ref('Schedule') },
        200: { description: 'the schedule of a repeated idempotency key', schema: ref('Schedule') },
      },
      errors: [400, 413, 415],
    }),
    async (req, reply) => {
      const body = withKeyTenant(callerOf(req), req.body);
      const r = await schedules.createSchedule(body, { ...tenantOf(req), traceparent: traceparentOf(req) });
      return reply.code(r.created ? 201 : 200).send(await viewOf(r.schedule));
    },
  );

  // The fire times a schedule would have, without creating it (validates the body like a create).
  app.post<{ Querystring: Query }>(
    '/v1/schedules::preview',
    read('The fire times of a schedule not created yet', {
      params: [],
      body: spec,
      query: previewQuery,
      ok: { 200: { description: 'the next fire times', schema: fireTimes } },
      errors: [400, 413, 415],
    }),
    (req) => ({
      fire_times: schedules.previewSpec(withKeyTenant(callerOf(req), req.body), req.query).map(previewView),
    }),
  );

  app.get<{ Querystring: Query }>(
    '/v1/schedules',
    read("A tenant's schedules", {
      params: [],
      query: {
        type: 'object',
        properties: { tenant: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' } },
      },
      ok: {
        200: {
          description: 'one page, in creation order',
          schema: {
            type: 'object',
            properties: {
              schedules: { type: 'array', items: ref('Schedule') },
              next_after: { type: ['string', 'null'] },
            },
            required: ['schedules', 'next_after'],
          },
        },
      },
      errors: [400],
    }),
    async (req) => {
      const tenant = listTenant(callerOf(req), req.query.tenant);
      const page = await schedules.listSchedules(tenant, req.query);
      return { schedules: await viewsOf(page.schedules), next_after: page.nextAfter };
    },
  );

  app.get('/v1/schedules/:id', read('A schedule'), async (req: IdRequest) =>
    viewOf(await schedules.getSchedule(req.params.id, tenantOf(req))),
  );

  const update = (merge: boolean) => async (req: IdRequest) => {
    const version = expectedVersion(req.headers['if-match']);
    return viewOf(
      await schedules.updateSchedule(req.params.id, withKeyTenant(callerOf(req), req.body), {
        merge,
        ...tenantOf(req),
        ...(version === undefined ? {} : { expectedVersion: version }),
      }),
    );
  };
  app.put(
    '/v1/schedules/:id',
    write("Replace a schedule's rules (If-Match: its version)", { body: spec, errors: bodyErrors }),
    update(false),
  );
  app.patch(
    '/v1/schedules/:id',
    write("Change some of a schedule's rules (JSON merge patch)", {
      body: { type: 'object' },
      errors: bodyErrors,
    }),
    update(true),
  );

  app.delete(
    '/v1/schedules/:id',
    write('Delete a schedule (its waiting runs are cancelled; deleting again changes nothing)', {
      errors: [400, 404],
    }),
    async (req: IdRequest) => viewOf(await schedules.deleteSchedule(req.params.id, tenantOf(req))),
  );

  app.post('/v1/schedules/:id/pause', write('Pause a schedule'), async (req: IdRequest) =>
    viewOf(await schedules.pauseSchedule(req.params.id, tenantOf(req))),
  );

  app.post(
    '/v1/schedules/:id/resume',
    write('Resume a paused schedule', {
      body: { type: 'object', properties: { catch_up: { type: 'boolean' } } },
      errors: bodyErrors,
    }),
    async (req: IdRequest) =>
      viewOf(await schedules.resumeSchedule(req.params.id, req.body ?? {}, tenantOf(req))),
  );

  app.post(
    '/v1/schedules/:id/trigger',
    write('Run a schedule once now', {
      body: { type: 'object', properties: { idempotency_key: { type: 'string' } } },
      ok: {
        201: { description: 'created', schema: ref('Job') },
        200: { description: 'the run of a repeated idempotency key', schema: ref('Job') },
      },
      errors: bodyErrors,
    }),
    async (req: IdRequest, reply) => {
      const r = await schedules.triggerNow(req.params.id, req.body ?? {}, {
        ...tenantOf(req),
        traceparent: traceparentOf(req),
      });
      return reply.code(r.created ? 201 : 200).send(jobView(r.job));
    },
  );

  app.post(
    '/v1/schedules/:id/backfill',
    write('Run the occurrences of a past range', {
      body: {
        type: 'object',
        properties: {
          from: { type: 'string', format: 'date-time' },
          to: { type: 'string', format: 'date-time' },
          // The rate is the API's setting (KAIROS_BACKFILL_RATE_PER_SEC), answered, not asked.
          max_count: {
            type: 'integer',
            description:
              'refuse a range with more occurrences (default and ceiling KAIROS_BACKFILL_MAX_COUNT)',
          },
        },
        required: ['from', 'to'],
      },
      ok: {
        201: { description: 'runs created', schema: backfillSchema },
        200: { description: 'every run already existed', schema: backfillSchema },
      },
      errors: bodyErrors,
    }),
    async (req: IdRequest, reply) => {
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
    },
  );

  app.get(
    '/v1/schedules/:id/preview',
    read("A schedule's next fire times", {
      query: previewQuery,
      ok: {
        200: {
          description: 'the next fire times, in its zone',
          schema: {
            type: 'object',
            properties: {
              schedule_id: { type: 'string' },
              time_zone: { type: 'string' },
              state: { type: 'string' },
              fire_times: { type: 'array', items: ref('FireTime') },
            },
            required: ['schedule_id', 'time_zone', 'state', 'fire_times'],
          },
        },
      },
    }),
    async (req: IdQueryRequest) => {
      const r = await schedules.preview(req.params.id, req.query, tenantOf(req));
      return {
        schedule_id: r.schedule.id,
        time_zone: r.schedule.timeZone,
        state: r.schedule.state,
        fire_times: r.entries.map(previewView),
      };
    },
  );

  app.get(
    '/v1/schedules/:id/runs',
    read("A schedule's runs, newest occurrence first", {
      query: {
        type: 'object',
        properties: { limit: { type: 'string' }, before: { type: 'string', format: 'date-time' } },
      },
      ok: {
        200: {
          description: 'the runs',
          schema: {
            type: 'object',
            properties: { runs: { type: 'array', items: ref('Job') } },
            required: ['runs'],
          },
        },
      },
    }),
    async (req: IdQueryRequest) => ({
      runs: (await schedules.runs(req.params.id, req.query, tenantOf(req))).map(jobView),
    }),
  );
}
