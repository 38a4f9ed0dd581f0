import type { JobCommands, Replays, ScheduleCommands } from '@kairos/commands';
import type { Pool } from '@kairos/db';
import {
  clientErrorProblem,
  DEFAULT_RATE_PER_SEC,
  frameworkErrorProblem,
  installAuth,
  installRequestMetrics,
  KeyVerifier,
  postgresCheck,
  problem,
  readinessHandler,
  type ReadinessCheck,
  type RequestObserver,
  sendProblem,
  toProblem,
} from '@kairos/http';
import { silentLogger, type Logger } from '@kairos/observability';
import Fastify, { type FastifyInstance } from 'fastify';
import { CONSOLE_PREFIX, consoleRoutes } from './console-routes.js';
import { dlqRoutes } from './dlq-routes.js';
import { jobRoutes } from './job-routes.js';
import { keyRoutes } from './key-routes.js';
import { DOCS_PREFIX, installOpenApi, serveOpenApi } from './openapi.js';
import { readinessSchema } from './api-schemas.js';
import { documented, jsonOf } from './route-docs.js';
import type { CanarySettings } from './overview.js';
import { overviewRoutes } from './overview-routes.js';
import { replayRoutes } from './replay-routes.js';
import { traceparentOf } from './request-context.js';
import { scheduleRoutes } from './schedule-routes.js';
import { statusRoutes } from './status-routes.js';
import { workerRoutes } from './worker-routes.js';
import type { StatusSources } from './system-status.js';

export interface ApiOptions {
  readonly commands: JobCommands;
  /** Recurring schedules (the /v1/schedules routes exist only when given). */
  readonly schedules?: ScheduleCommands;
  /** Dead-letter replays and re-runs (the routes exist only when given; the caller starts and stops it). */
  readonly replays?: Replays;
  /** What `GET /readyz` asks besides PostgreSQL (the schema registry, …). Default: none. */
  readonly readiness?: readonly ReadinessCheck[];
  /** What `GET /v1/status` asks (the route exists only when given). */
  readonly status?: StatusSources;
  /**
   * The tracker's canary settings, by which `GET /v1/overview` judges canaries stalled.
   * Default: a canary every 60,000 ms, stalled after 120,000 ms (`intervalMs: 0`: the canary is off).
   */
  readonly canary?: CanarySettings;
  /** The database of the API keys (and of what the API reads beyond the commands). */
  readonly pool: Pool;
  /**
   * `keys`: every route but /healthz needs an API key (the default). `off`: every caller is an
   * admin of every tenant, for local development only; the API logs a warning at start.
   */
  readonly auth?: 'keys' | 'off';
  /** How long a key read from PostgreSQL is trusted (revocation elsewhere takes this long). Default: 5,000 ms. */
  readonly keyCacheMs?: number;
  /** Requests per second of a key that has no rate of its own. Default: 1,000. */
  readonly defaultRatePerSec?: number;
  readonly log?: Logger;
  /** Told of every answered request, by route pattern (`kairos_http_request_duration_seconds`). Default: none. */
  readonly metrics?: RequestObserver;
  /** Largest request body in bytes. Default: 8 MiB (a full batch of large payloads). */
  readonly bodyLimit?: number;
  /**
   * The console's built files, served under /console/ (see defaultConsoleDir). Default: no
   * console.
   */
  readonly consoleDir?: string;
}

export interface ApiRoute {
  readonly method: string;
  readonly url: string;
}

const ROUTES = new WeakMap<FastifyInstance, ApiRoute[]>();

/** Every route a server built by createApiServer has (the OpenAPI conformance test reads it). */
export function apiRoutes(app: FastifyInstance): readonly ApiRoute[] {
  return ROUTES.get(app) ?? [];
}

/**
 * Builds the HTTP API (not listening yet): jobs, recurring schedules, API keys and health, every
 * route but health behind an API key whose tenant scopes what it sees.
 */
export async function createApiServer(options: ApiOptions): Promise<FastifyInstance> {
  const log = options.log ?? silentLogger();
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? 8 * 1024 * 1024,
    logger: false,
    clientErrorHandler: clientErrorProblem,
    frameworkErrors: frameworkErrorProblem,
  });
  const routes: ApiRoute[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
  });
  if (options.metrics) installRequestMetrics(app, options.metrics);

  app.setErrorHandler((err, req, reply) => {
    const p = toProblem(err);
    if (p.status >= 500) log.error({ err, traceparent: traceparentOf(req) ?? undefined }, 'request failed');
    return sendProblem(reply, p);
  });
  app.setNotFoundHandler((req, reply) =>
    sendProblem(reply, problem('NOT_FOUND', 404, `no route ${req.method} ${req.url}`)),
  );

  const off = options.auth === 'off';
  if (off)
    log.warn('API authentication is OFF: every caller is an admin of every tenant (local development only)');
  const verifier = off
    ? undefined
    : new KeyVerifier({
        pool: options.pool,
        ...(options.keyCacheMs === undefined ? {} : { cacheMs: options.keyCacheMs }),
      });
  await installAuth(app, {
    keys: verifier ?? 'off',
    publicPrefixes: [DOCS_PREFIX, CONSOLE_PREFIX],
    ...(options.defaultRatePerSec === undefined ? {} : { defaultRatePerSec: options.defaultRatePerSec }),
  });

  await installOpenApi(app, options.commands.limits);
  jobRoutes(app, options.commands, options.pool);
  if (options.schedules) scheduleRoutes(app, options.schedules, options.commands.limits);
  dlqRoutes(app, options.pool);
  if (options.replays) replayRoutes(app, options.replays);
  keyRoutes(app, {
    pool: options.pool,
    verifier,
    defaultRatePerSec: options.defaultRatePerSec ?? DEFAULT_RATE_PER_SEC,
    log,
  });
  if (options.status) {
    statusRoutes(app, options.status);
    workerRoutes(app, options.status);
  }
  overviewRoutes(app, {
    pool: options.pool,
    resourceClasses: options.commands.limits.resourceClasses,
    canary: options.canary ?? { intervalMs: 60_000, stallMs: 120_000 },
  });
  app.get(
    '/healthz',
    documented('public', {
      summary: 'Liveness',
      tag: 'health',
      public: true,
      ok: {
        200: { description: 'serving', schema: { type: 'object', properties: { status: { const: 'ok' } } } },
      },
    }),
    () => ({ status: 'ok' }),
  );
  const pg = postgresCheck(options.pool);
  app.get(
    '/readyz',
    documented('public', {
      summary: 'Readiness: PostgreSQL and the other dependencies answer',
      tag: 'health',
      public: true,
      ok: {
        200: { description: 'every dependency answers', schema: jsonOf(readinessSchema) },
        503: {
          description: 'some dependency does not (each check says which)',
          schema: jsonOf(readinessSchema),
        },
      },
    }),
    readinessHandler([pg, ...(options.readiness ?? [])]),
  );
  if (options.consoleDir) await consoleRoutes(app, options.consoleDir);
  await serveOpenApi(app);
  return app;
}
