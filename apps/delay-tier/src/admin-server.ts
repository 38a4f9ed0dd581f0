import { KairosError, type FieldError } from '@kairos/core';
import { assertResourceClass } from '@kairos/kafka';
import {
  clientErrorProblem,
  frameworkErrorProblem,
  installAuth,
  problem,
  sendProblem,
  readinessHandler,
  toProblem,
  type KeyVerifier,
  type ReadinessCheck,
} from '@kairos/http';
import { silentLogger, type Logger } from '@kairos/observability';
import Fastify, { type FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RateLimit, TierAdmin } from './admin.js';

export interface AdminServerOptions {
  readonly admin: TierAdmin;
  /** Prometheus exposition, e.g. the delay tier metrics of @kairos/observability. */
  readonly metrics: { text(): Promise<string>; readonly contentType: string };
  /**
   * API keys: /admin/* needs an admin key of every tenant (it acts on every tenant's dispatch);
   * `off` for local development only.
   */
  readonly keys: KeyVerifier | 'off';
  /** What `GET /readyz` asks (Redis, PostgreSQL, the tier running). Default: none (always ready). */
  readonly readiness?: readonly ReadinessCheck[];
  readonly log?: Logger;
}

/** Shortest and longest lookahead an operator may set: 1 s .. 24 h. */
export const LOOKAHEAD_MIN_MS = 1000;
export const LOOKAHEAD_MAX_MS = 86_400_000;

const lookaheadBody = z
  .object({ lookahead_ms: z.number().int().min(LOOKAHEAD_MIN_MS).max(LOOKAHEAD_MAX_MS) })
  .strict();

/**
 * Bounds of a class's rate limit an operator may set: from one dispatch per 100 s (slower is a
 * pause by another name, and a typo such as 1e-9 would hold a class for every tenant for ever)
 * to 100,000 a second, with a burst of 1 to 100,000.
 */
export const RATE_LIMIT_MIN_PER_SEC = 0.01;
export const RATE_LIMIT_MAX_PER_SEC = 100_000;
export const RATE_LIMIT_MAX_BURST = 100_000;

const rateLimitBody = z
  .object({
    rate_per_sec: z.number().min(RATE_LIMIT_MIN_PER_SEC).max(RATE_LIMIT_MAX_PER_SEC),
    burst: z.number().int().min(1).max(RATE_LIMIT_MAX_BURST),
  })
  .strict();

/** Every failing field of `input`, one entry per unknown key too; none when it parses. */
function fieldErrors(shape: z.ZodType, input: unknown): FieldError[] {
  const parsed = shape.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ field: [...i.path, k].map(String).join('.'), message: 'unknown field' }))
      : [{ field: i.path.map(String).join('.') || '(body)', message: i.message }],
  );
}

function classErrors(resourceClass: string): FieldError[] {
  try {
    assertResourceClass(resourceClass);
    return [];
  } catch (err) {
    return [{ field: 'class', message: err instanceof Error ? err.message : String(err) }];
  }
}

function rejectIfAny(errors: FieldError[]): void {
  if (errors.length === 0) return;
  throw new KairosError('VALIDATION', `invalid ${errors.map((e) => e.field).join(', ')}`, {
    fields: errors,
  });
}

const rateLimitView = (l: RateLimit) => ({ rate_per_sec: l.ratePerSec, burst: l.burst });

/**
 * Builds the delay tier's operator server (not listening yet): /metrics, /healthz and /readyz (open, for
 * scrapers and probes) and, behind an admin API key of every tenant (the system admin: a lookahead
 * or a class's rate limit holds for every tenant), /admin/* for status, the lookahead window and
 * per-resource-class rate limits.
 */
export async function createAdminServer(options: AdminServerOptions): Promise<FastifyInstance> {
  const log = options.log ?? silentLogger();
  const { admin, metrics } = options;
  // Admin bodies are a few bytes; anything large is a mistake or an attack.
  const app = Fastify({
    bodyLimit: 64 * 1024,
    logger: false,
    clientErrorHandler: clientErrorProblem,
    frameworkErrors: frameworkErrorProblem,
  });

  app.setErrorHandler((err, _req, reply) => {
    const p = toProblem(err);
    if (p.status >= 500) log.error({ err }, 'admin request failed');
    return sendProblem(reply, p);
  });
  app.setNotFoundHandler((req, reply) =>
    sendProblem(reply, problem('NOT_FOUND', 404, `no route ${req.method} ${req.url}`)),
  );

  await installAuth(app, { keys: options.keys });
  const open = { config: { scope: 'public' } } as const;
  const systemOnly = { config: { scope: 'system' } } as const;
  app.get('/metrics', open, async (_req, reply) =>
    reply.type(metrics.contentType).send(await metrics.text()),
  );
  app.get('/healthz', open, () => ({ status: 'ok' }));
  app.get('/readyz', open, readinessHandler(options.readiness ?? []));

  app.get('/admin/status', systemOnly, async () => {
    const { partitions } = await admin.status();
    return {
      partitions: partitions.map((p) => ({
        partition: p.partition,
        epoch: p.epoch,
        mode: p.mode,
        hot_jobs: p.hotJobs,
        oldest_due_age_ms: p.oldestDueAgeMs,
      })),
    };
  });

  const lookaheadView = () => {
    const l = admin.lookahead();
    return { configured_ms: l.configuredMs, effective_ms: l.effectiveMs };
  };
  app.get('/admin/lookahead', systemOnly, lookaheadView);
  app.put('/admin/lookahead', systemOnly, (req) => {
    rejectIfAny(fieldErrors(lookaheadBody, req.body));
    const { lookahead_ms } = lookaheadBody.parse(req.body);
    admin.setLookahead(lookahead_ms);
    log.info({ lookaheadMs: lookahead_ms }, 'lookahead set through the admin API');
    return lookaheadView();
  });

  app.get('/admin/rate-limits', systemOnly, async () => {
    const limits = await admin.rateLimits();
    return {
      rate_limits: Object.fromEntries(Object.entries(limits).map(([rc, l]) => [rc, rateLimitView(l)])),
    };
  });
  app.put<{ Params: { class: string } }>('/admin/rate-limits/:class', systemOnly, async (req) => {
    const resourceClass = req.params.class;
    rejectIfAny([...classErrors(resourceClass), ...fieldErrors(rateLimitBody, req.body)]);
    const body = rateLimitBody.parse(req.body);
    const limit = { ratePerSec: body.rate_per_sec, burst: body.burst };
    await admin.setRateLimit(resourceClass, limit);
    log.info({ resourceClass, ...limit }, 'rate limit set through the admin API');
    return { resource_class: resourceClass, ...rateLimitView(limit) };
  });
  app.delete<{ Params: { class: string } }>('/admin/rate-limits/:class', systemOnly, async (req, reply) => {
    const resourceClass = req.params.class;
    rejectIfAny(classErrors(resourceClass));
    await admin.clearRateLimit(resourceClass);
    log.info({ resourceClass }, 'rate limit cleared through the admin API');
    return reply.code(204).send();
  });

  return app;
}
