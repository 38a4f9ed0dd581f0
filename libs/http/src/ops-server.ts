import Fastify from 'fastify';
import { readinessHandler, type ReadinessCheck } from './readiness.js';
import { serveMetrics, type MetricsSource } from './request-metrics.js';

/** A PostgreSQL pool answers a trivial query: the readiness check every app that holds one runs. */
export function postgresCheck(pool: { query(sql: string): Promise<unknown> }): ReadinessCheck {
  return { name: 'postgresql', check: () => pool.query('SELECT 1') };
}

export interface OpsServerOptions {
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly metrics: MetricsSource;
  /** What /readyz asks. */
  readonly checks: readonly ReadinessCheck[];
}

/**
 * An app's operations port: Prometheus's /metrics, /healthz (liveness: the process answers) and
 * /readyz (its dependencies answer and its service runs), open to scrapers and probes, apart from
 * any port that serves users.
 */
export async function startOpsServer(o: OpsServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  serveMetrics(app, o.metrics);
  app.get('/healthz', () => ({ status: 'ok' }));
  app.get('/readyz', readinessHandler(o.checks));
  const url = await app.listen({ host: o.host, port: o.port });
  return { url, close: () => app.close() };
}
