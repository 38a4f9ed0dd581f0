import {
  createJobShape,
  JOB_STATES,
  jobSearchQuery,
  rescheduleShape,
  SCHEDULE_HEALTHS,
  SCHEDULE_STATES,
  scheduleShapeFor,
  SCOPES,
  type JobLimits,
} from '@kairos/core';
import { z } from 'zod';

// The shapes of every answer of the API. The views are typed from them (so they cannot drift
// apart at compile time), the OpenAPI document is generated from them and from the request
// schemas core validates with, and the conformance test checks real answers against it.

const time = z.iso.datetime();
const nullableTime = time.nullable();

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z
      .string()
      .describe('stable, machine-readable: VALIDATION, NOT_FOUND, UNAUTHENTICATED, RATE_LIMITED …'),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .describe('RFC 9457 problem details (application/problem+json)');

export const jobViewSchema = z.object({
  id: z.uuid(),
  tenant: z.string(),
  type: z.string(),
  resource_class: z.string(),
  payload: z.unknown(),
  state: z.enum(JOB_STATES),
  due_at: time,
  deadline_at: nullableTime,
  idempotency_key: z.string().nullable(),
  max_attempts: z.number().int(),
  retry: z.object({ base_ms: z.number().int(), cap_ms: z.number().int(), jitter_ms: z.number().int() }),
  attempt: z.number().int(),
  fence: z.number().int(),
  version: z.number().int(),
  shard: z.number().int(),
  created_at: time,
  dispatched_at: nullableTime,
  started_at: nullableTime,
  finished_at: nullableTime,
  last_error: z.string().nullable(),
  last_failure_class: z.string().nullable(),
  replay_of: z.uuid().nullable().describe('the job this one replays or re-runs'),
  schedule_id: z.uuid().nullable(),
  occurrence: z.object({ id: z.uuid(), at: time, kind: z.string() }).nullable(),
  traceparent: z
    .string()
    .nullable()
    .describe(
      'W3C trace context the job runs in, the same for every attempt (null: created before Kairos kept one)',
    ),
});
export type JobView = z.infer<typeof jobViewSchema>;

export const attemptViewSchema = z.object({
  attempt: z.number().int(),
  fence: z.number().int(),
  epoch: z.number().int(),
  worker_id: z.string().nullable(),
  outcome: z.string().nullable(),
  failure_class: z.string().nullable(),
  error_class: z.string().nullable(),
  error_message: z.string().nullable(),
  retry_after_ms: z.number().int().nullable(),
  dispatched_at: nullableTime,
  started_at: nullableTime,
  finished_at: nullableTime,
  suppressed: z.boolean(),
});
export type AttemptView = z.infer<typeof attemptViewSchema>;

export const previewEntrySchema = z.object({
  instant: time,
  local: z.string(),
  fire_at: time,
  nominal: z.string(),
  kind: z.enum(['regular', 'gap-shifted', 'overlap-first', 'overlap-last']),
});
export type PreviewView = z.infer<typeof previewEntrySchema>;

export const keyViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  tenant: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  rate_per_sec: z.number().int().nullable(),
  expires_at: nullableTime,
  created_at: time,
  created_by: z.string(),
  revoked_at: nullableTime,
  revoked_by: z.string().nullable(),
});
export type KeyView = z.infer<typeof keyViewSchema>;

/** A schedule: its rules as in a create request, plus state and progress. */
export function scheduleViewSchema(limits: JobLimits) {
  return scheduleShapeFor(limits)
    .omit({ start_at: true, end_at: true })
    .extend({
      id: z.uuid(),
      start_at: nullableTime,
      end_at: nullableTime,
      idempotency_key: z.string().nullable(),
      state: z.enum(SCHEDULE_STATES),
      version: z.number().int(),
      misfire_tolerance_ms: z.number().int(),
      shard: z.number().int(),
      next_fire: previewEntrySchema.nullable(),
      generated_until: z.string().nullable(),
      misfires_skipped: z.number().int(),
      health: z.enum(SCHEDULE_HEALTHS).meta({
        description:
          'late: a run did not succeed within sla_ms of its fire time and no later run has succeeded since; ok: within its SLA; unknown: no sla_ms, not active, or no run judged yet',
      }),
      last_success_at: nullableTime.meta({ description: 'when the newest run that succeeded finished' }),
      late_runs: z
        .number()
        .int()
        .meta({ description: 'runs not SUCCEEDED within sla_ms of their fire time' }),
      misfires: z
        .number()
        .int()
        .meta({ description: 'occurrences the misfire policy dropped (runs skipped or never created)' }),
      skips: z.number().int().meta({ description: 'runs skipped by the overlap policy or while paused' }),
      created_at: time,
      updated_at: time,
      paused_at: nullableTime,
      deleted_at: nullableTime,
    });
}

/** The request bodies and queries, exactly the schemas core validates them with. */
export function requestSchemas(limits: JobLimits) {
  return {
    createJob: createJobShape,
    reschedule: rescheduleShape,
    schedule: scheduleShapeFor(limits),
    jobSearch: jobSearchQuery,
  };
}

export const jobPageSchema = z.object({ jobs: z.array(jobViewSchema), next_cursor: z.string().nullable() });

export const jobCountsSchema = z.object({
  tenant: z.string(),
  total: z.number().int(),
  counts: z.array(
    z.object({ state: z.enum(JOB_STATES), resource_class: z.string(), count: z.number().int() }),
  ),
});

export const whoamiSchema = z.object({
  key_id: z.string(),
  name: z.string(),
  tenant: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  rate_per_sec: z.number().int().nullable(),
  expires_at: nullableTime,
});

/** A new key's answer: the only one that holds its secret. */
export const createdKeySchema = keyViewSchema.extend({ key: z.string() });

/** A revoked key: with `cascade=true`, the ids of the keys it made that were revoked with it. */
export const revokedKeySchema = keyViewSchema.extend({ cascaded: z.array(z.string()) });

/** A job of a batch create: `created: false` for a repeated idempotency key. */
export const batchJobsSchema = z.object({ jobs: z.array(jobViewSchema.extend({ created: z.boolean() })) });

export const replaySchema = z.object({
  id: z.uuid(),
  tenant: z.string(),
  filter: z.record(z.string(), z.unknown()),
  rate_per_sec: z.number().int(),
  state: z.enum(['RUNNING', 'DONE', 'CANCELLED']),
  selected: z.number().int(),
  replayed: z.number().int(),
  created_by: z.string(),
  created_at: z.iso.datetime(),
  finished_at: z.iso.datetime().nullable(),
});

/** A dependency as the API sees it: answering or not, and what it said. */
export const serviceStatusSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  detail: z.string(),
  latency_ms: z.number(),
});

const partitionLagSchema = z.object({
  partition: z.number().int(),
  committed: z.number().int().nullable(),
  end: z.number().int(),
  lag: z.number().int(),
});

/** A consumer group of Kairos (an app and its instances) and how far behind it is. */
export const groupStatusSchema = z.object({
  group: z.string(),
  state: z.string(),
  members: z.array(z.object({ client_id: z.string(), host: z.string() })),
  lag: z.number().int(),
  topics: z.array(
    z.object({ topic: z.string(), lag: z.number().int(), partitions: z.array(partitionLagSchema) }),
  ),
});

export const systemStatusSchema = z.object({
  services: z.array(serviceStatusSchema),
  groups: z.array(groupStatusSchema),
});
export type SystemStatus = z.infer<typeof systemStatusSchema>;

/** `GET /readyz`: ready or not, and each dependency's answer. */
export const readinessSchema = z.object({
  status: z.enum(['ready', 'not ready']),
  checks: z.array(serviceStatusSchema),
});

/** An alert holding now, as the tracker raises it (Alertmanager's labels and summary). */
export const alertViewSchema = z.object({
  name: z.enum(['canary_stalled', 'schedule_sla_missed', 'postgres_only']),
  labels: z.record(z.string(), z.string()),
  since: time.meta({ description: 'when it began to hold (at the latest)' }),
  summary: z.string(),
});

/** `GET /v1/overview`: what the console's overview page shows, read from PostgreSQL. */
export const overviewSchema = z.object({
  tenant: z.string().nullable().meta({ description: 'the tenant shown; null: every tenant' }),
  at: time,
  jobs: z
    .array(
      z.object({
        tenant: z.string(),
        resource_class: z.string(),
        state: z.enum(['SCHEDULED', 'QUEUED', 'RUNNING', 'FAILED']),
        count: z.number().int(),
      }),
    )
    .meta({ description: 'live jobs and dead letters (FAILED) by tenant, class and state' }),
  dispatch_lag: z
    .array(
      z.object({
        resource_class: z.string(),
        points: z.array(
          z.object({
            at: time.meta({ description: 'start of the minute' }),
            count: z.number().int(),
            p50_ms: z.number(),
            p99_ms: z.number(),
            max_ms: z.number(),
          }),
        ),
      }),
    )
    .meta({
      description:
        'due → dispatch lag per class and minute (minutes without dispatches are left out), every tenant and delay-tier instance merged; percentiles interpolated within log-spaced buckets',
    }),
  canaries: z
    .array(
      z.object({
        resource_class: z.string(),
        last_success_at: nullableTime,
        latency_ms: z.number().nullable().meta({ description: 'the last success, creation to SUCCEEDED' }),
        stalled: z.boolean(),
      }),
    )
    .meta({ description: 'per class (keys of every tenant only; empty when the canary is off)' }),
  alerts: z.array(alertViewSchema).meta({
    description:
      "canary_stalled and postgres_only (keys of every tenant only), schedule_sla_missed (the key's tenant's schedules)",
  }),
  postgres_only: z.array(z.object({ partition: z.number().int(), since: time, owner: z.string() })).meta({
    description:
      'partitions dispatched from PostgreSQL alone (Redis out of memory); keys of every tenant only',
  }),
});
export type OverviewView = z.infer<typeof overviewSchema>;

/** A worker instance of a service, as its heartbeats on kairos.workers tell it. */
const workerInstanceSchema = z.object({
  worker_id: z.string(),
  host: z.string(),
  pid: z.number().int(),
  started_at: time,
  last_seen_at: time,
  live: z.boolean().meta({ description: 'heard from within 3 of its heartbeat intervals' }),
  resource_classes: z.array(z.string()),
  job_types: z.array(z.string()),
});

/** A worker service's consumer group: who runs in it, what it handles, how far behind it is. */
export const workerGroupSchema = z.object({
  group: z.string(),
  services: z.array(z.string()).meta({ description: 'the service names its workers gave (usually one)' }),
  resource_classes: z.array(z.string()),
  job_types: z.array(z.string()).meta({ description: 'handled by its live workers' }),
  state: z
    .string()
    .meta({ description: "Kafka's state of the group (Empty, Stable, …; Dead: unknown to Kafka)" }),
  members: z.number().int().meta({ description: 'live members of the Kafka group' }),
  lag: z.number().int(),
  last_seen_at: time.nullable().meta({ description: 'the latest heartbeat of any of its workers' }),
  workers: z.array(workerInstanceSchema),
});

export const workerGroupsSchema = z.object({ groups: z.array(workerGroupSchema) });
export type WorkerGroupView = z.infer<typeof workerGroupSchema>;
