import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** The route label of a request that matched no route (a 404): raw URLs never become labels. */
export const UNMATCHED_ROUTE = '_unmatched';

/** Methods labelled as they are; any other (a client's invention) counts as `_other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface HttpMetrics {
  readonly registry: Registry;
  /** Content-Type of `text()`, for the /metrics response. */
  readonly contentType: string;
  /**
   * One answered request. `route` is the matched route's pattern (`/v1/jobs/:id`), or undefined
   * when none matched; never the raw URL, whose ids would make a series per job.
   */
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
  text(): Promise<string>;
}

// 1 ms .. 10 s: an API answer past 10 s has timed out for most clients anyway.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * `kairos_http_request_duration_seconds{method, route, status}` in a new registry with the default
 * process metrics. Cardinality is bounded by the routes the server declares, the methods above and
 * the status codes it answers with.
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'kairos_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route pattern and status code, and how long they took',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    contentType: registry.contentType,
    observe(method, route, status, seconds) {
      // prom-client throws on NaN/Infinity: a clock oddity must not fail a request.
      if (!Number.isFinite(seconds)) return;
      duration.observe(
        {
          method: METHODS.has(method) ? method : '_other',
          route: route ?? UNMATCHED_ROUTE,
          status: String(status),
        },
        seconds,
      );
    },
    text: () => registry.metrics(),
  };
}
