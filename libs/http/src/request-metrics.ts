import type { FastifyInstance } from 'fastify';

/** Where a server reports each answered request (e.g. @kairos/observability's HTTP metrics). */
export interface RequestObserver {
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
}

/**
 * Reports every answered request of `app` (its own routes, 404s, auth refusals, errors) with the
 * matched route's pattern, not the URL: `/v1/jobs/:id` stays one series whatever the id.
 */
export function installRequestMetrics(app: FastifyInstance, observer: RequestObserver): void {
  app.addHook('onResponse', (req, reply, done) => {
    // routeOptions.url is undefined when no route matched (the not-found handler answered).
    observer.observe(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** Prometheus exposition: the text and its Content-Type. */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

/** `GET /metrics` on `app`, open (for a scraper on a separate, internal port). */
export function serveMetrics(app: FastifyInstance, metrics: MetricsSource): void {
  app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.text()));
}
