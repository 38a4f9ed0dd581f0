import { z } from 'zod';
import { storableJson } from '../storable.js';
import { joinPath } from '../zod-errors.js';
import type { Parsed } from '../create-job.js';
import type { FieldError } from '../errors.js';
import type { JobLimits } from '../limits.js';
import { DEFAULT_RETRY_BACKOFF, MAX_RETRY_DELAY_MS, type RetryBackoff } from '../retry.js';
import { compileCron } from './cron.js';
import { nextFireTimes } from './occurrences.js';
import {
  DEFAULT_DST_POLICY,
  DEFAULT_MISFIRE_POLICY,
  DEFAULT_OVERLAP_POLICY,
  DST_GAP_POLICIES,
  DST_OVERLAP_POLICIES,
  MAX_JITTER_MS,
  MAX_MISFIRE_COUNT,
  MAX_MISFIRE_WINDOW_MS,
  MAX_SCHEDULE_DEADLINE_MS,
  MAX_SLA_MS,
  MIN_SLA_MS,
  OVERLAP_POLICIES,
  type DstPolicy,
  type MisfirePolicy,
  type OverlapPolicy,
  type ScheduleTiming,
} from './policy.js';
import { checkTimeZone } from './zone.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const NAME_MESSAGE = 'letters, digits and . _ : - only';

const count = z.number().int().min(1).max(MAX_MISFIRE_COUNT);

/**
 * The wire shape of a schedule (create and update, HTTP and schedule-requests), with the checks
 * that depend on the limits inside it, so that every field's error is reported in one go.
 */
function buildShape(limits: JobLimits) {
  return z
    .object({
      tenant: z.string().min(1).max(64).regex(NAME, NAME_MESSAGE),
      cron: z
        .string()
        .max(1024)
        .superRefine((value, ctx) => {
          const r = compileCron(value);
          if (!r.ok) ctx.addIssue({ code: 'custom', message: `invalid cron expression: ${r.reason}` });
        }),
      time_zone: z.string().superRefine((value, ctx) => {
        const r = checkTimeZone(value);
        if (!r.ok) ctx.addIssue({ code: 'custom', message: r.reason });
      }),
      start_at: z.iso.datetime({ offset: true }).optional(),
      end_at: z.iso.datetime({ offset: true }).optional(),
      job: z
        .object({
          type: z.string().min(1).max(128).regex(NAME, NAME_MESSAGE),
          resource_class: z
            .string()
            .min(1)
            .max(32)
            .superRefine((value, ctx) => {
              if (!limits.resourceClasses.includes(value)) {
                ctx.addIssue({
                  code: 'custom',
                  message: `unknown resource class "${value}"; one of ${limits.resourceClasses.join(', ')}`,
                });
              }
            }),
          payload: z
            .unknown()
            .optional()
            .superRefine(storableJson)
            .superRefine((value, ctx) => {
              const bytes = new TextEncoder().encode(JSON.stringify(value ?? {})).length;
              if (bytes > limits.maxPayloadBytes) {
                ctx.addIssue({
                  code: 'custom',
                  message: `payload is ${bytes} bytes as JSON; the limit is ${limits.maxPayloadBytes}`,
                  params: { rule: 'PAYLOAD_TOO_LARGE' },
                });
              }
            }),
          max_attempts: z.number().int().min(1).max(limits.maxAttemptsCeiling).optional(),
          retry: z
            .object({
              base_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
              cap_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
              jitter_ms: z.number().int().min(0).max(MAX_RETRY_DELAY_MS).optional(),
            })
            .strict()
            .superRefine((retry, ctx) => {
              const { baseMs, capMs } = retryBackoff(retry);
              if (capMs < baseMs) {
                ctx.addIssue({
                  code: 'custom',
                  path: ['cap_ms'],
                  message: `cap_ms (${capMs}) must be at least base_ms (${baseMs})`,
                });
              }
            })
            .optional(),
          /** Each run's deadline, ms after its occurrence's fire time. */
          deadline_ms: z.number().int().min(1).max(MAX_SCHEDULE_DEADLINE_MS).optional(),
        })
        .strict(),
      dst: z
        .object({
          gap: z.enum(DST_GAP_POLICIES).optional(),
          overlap: z.enum(DST_OVERLAP_POLICIES).optional(),
        })
        .strict()
        .optional(),
      misfire: z
        .discriminatedUnion('kind', [
          z.object({ kind: z.literal('skip') }).strict(),
          z.object({ kind: z.literal('fire_latest') }).strict(),
          z.object({ kind: z.literal('fire_all'), max_count: count }).strict(),
          z
            .object({
              kind: z.literal('within'),
              window_ms: z.number().int().min(1).max(MAX_MISFIRE_WINDOW_MS),
              max_count: count.optional(),
            })
            .strict(),
        ])
        .optional(),
      overlap: z.enum(OVERLAP_POLICIES).optional(),
      /** Jitter allowance: each occurrence fires up to this many ms before or after its time. */
      jitter_ms: z.number().int().min(0).max(MAX_JITTER_MS).optional(),
      /** How late after its fire time a run may succeed before the schedule alerts (none: never). */
      sla_ms: z.number().int().min(MIN_SLA_MS).max(MAX_SLA_MS).optional(),
    })
    .strict();
}

/** As in create-job: a retry field left out takes a default consistent with the fields given. */
function retryBackoff(given: { base_ms?: number; cap_ms?: number; jitter_ms?: number }): RetryBackoff {
  const baseMs = given.base_ms ?? Math.min(DEFAULT_RETRY_BACKOFF.baseMs, given.cap_ms ?? Infinity);
  const capMs = given.cap_ms ?? Math.max(DEFAULT_RETRY_BACKOFF.capMs, baseMs);
  return { baseMs, capMs, jitterMs: given.jitter_ms ?? DEFAULT_RETRY_BACKOFF.jitterMs };
}

type ScheduleShape = ReturnType<typeof buildShape>;
const shapes = new WeakMap<JobLimits, ScheduleShape>();

/** The wire shape of a schedule under these limits (cached per limits object); also its OpenAPI schema. */
export function scheduleShapeFor(limits: JobLimits): ScheduleShape {
  let shape = shapes.get(limits);
  if (!shape) {
    shape = buildShape(limits);
    shapes.set(limits, shape);
  }
  return shape;
}

export type ScheduleRequest = z.input<ScheduleShape>;

/** What each occurrence creates: a job like create-job's, due at the occurrence's fire time. */
export interface ScheduleJobTemplate {
  readonly type: string;
  readonly resourceClass: string;
  /** The payload as JSON text. */
  readonly payload: string;
  readonly maxAttempts: number;
  readonly retry: RetryBackoff;
  /** Deadline ms after the occurrence's fire time, or null for none. */
  readonly deadlineMs: number | null;
}

/** A validated schedule, every default filled in. */
export interface ScheduleSpec extends ScheduleTiming {
  readonly tenantId: string;
  readonly cron: string;
  /** Canonical IANA name. */
  readonly timeZone: string;
  readonly startAt: Date | null;
  readonly endAt: Date | null;
  readonly dst: DstPolicy;
  readonly job: ScheduleJobTemplate;
  readonly misfire: MisfirePolicy;
  readonly overlap: OverlapPolicy;
  /** Jitter allowance, ms (0: none). */
  readonly jitterMs: number;
  /** A run not SUCCEEDED this long after its fire time is late and the schedule alerts (null: no SLA). */
  readonly slaMs: number | null;
}

/**
 * Validates a schedule request against the limits, at `now`. Every failing field is reported with
 * its dotted path (after `pathPrefix`) and nothing is produced on any failure.
 */
export function parseScheduleSpec(
  input: unknown,
  limits: JobLimits,
  now: Date,
  pathPrefix = '',
): Parsed<ScheduleSpec> {
  const shape = scheduleShapeFor(limits).safeParse(input);
  if (!shape.success) {
    return {
      ok: false,
      errors: shape.error.issues.map((i) => ({
        field:
          joinPath(pathPrefix, i.code === 'unrecognized_keys' ? [...i.path, ...i.keys] : i.path) || '(body)',
        message: i.message,
        // A policy rule keeps its own reason (the Kafka ingress rejects it as such).
        ...(i.code === 'custom' && i.params?.rule === 'PAYLOAD_TOO_LARGE'
          ? { rule: 'PAYLOAD_TOO_LARGE' as const }
          : {}),
      })),
    };
  }
  const r = shape.data;
  const errors: FieldError[] = [];
  const at = (field: string, message: string) =>
    errors.push({ field: joinPath(pathPrefix, [field]), message });

  const j = r.job;
  const maxAttempts = j.max_attempts ?? limits.defaultMaxAttempts;
  const retry = retryBackoff(j.retry ?? {});
  const payload = JSON.stringify(j.payload ?? {});

  const startAt = r.start_at !== undefined ? new Date(r.start_at) : null;
  const endAt = r.end_at !== undefined ? new Date(r.end_at) : null;
  if (startAt && endAt && endAt.getTime() <= startAt.getTime()) at('end_at', 'end_at must be after start_at');
  else if (endAt && endAt.getTime() <= now.getTime()) at('end_at', 'end_at is in the past');

  const zone = checkTimeZone(r.time_zone);
  const timeZone = zone.ok ? zone.name : r.time_zone;
  const dst: DstPolicy = {
    gap: r.dst?.gap ?? DEFAULT_DST_POLICY.gap,
    overlap: r.dst?.overlap ?? DEFAULT_DST_POLICY.overlap,
  };
  if (errors.length === 0 && endAt) {
    const from = Math.max(now.getTime(), startAt?.getTime() ?? -Infinity);
    const timing: ScheduleTiming = { cron: r.cron, timeZone, startAt, endAt, dst };
    if (nextFireTimes(timing, from - 1, 1).length === 0) {
      at('end_at', `the schedule never fires between ${new Date(from).toISOString()} and end_at`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };

  const m = r.misfire;
  const misfire: MisfirePolicy =
    m === undefined
      ? DEFAULT_MISFIRE_POLICY
      : m.kind === 'fire_all'
        ? { kind: 'fire_all', maxCount: m.max_count }
        : m.kind === 'within'
          ? { kind: 'within', windowMs: m.window_ms, maxCount: m.max_count ?? MAX_MISFIRE_COUNT }
          : { kind: m.kind };
  return {
    ok: true,
    value: {
      tenantId: r.tenant,
      cron: r.cron.trim(),
      timeZone,
      startAt,
      endAt,
      dst,
      job: {
        type: j.type,
        resourceClass: j.resource_class,
        payload,
        maxAttempts,
        retry,
        deadlineMs: j.deadline_ms ?? null,
      },
      misfire,
      overlap: r.overlap ?? DEFAULT_OVERLAP_POLICY,
      jitterMs: r.jitter_ms ?? 0,
      slaMs: r.sla_ms ?? null,
    },
  };
}
