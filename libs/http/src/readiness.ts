import type { FastifyReply } from 'fastify';

/** One dependency an app needs to do its work, asked whether it answers. */
export interface ReadinessCheck {
  readonly name: string;
  /** Resolves when the dependency answers; what it resolves to is shown as the detail. */
  readonly check: () => Promise<unknown>;
}

/** A check's outcome: answering or not, what it said, how long it took. */
export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly latency_ms: number;
}

/** Asks one dependency, bounded in time: one that does not answer must not hang the probe. */
export async function probe(
  name: string,
  timeoutMs: number,
  ask: () => Promise<unknown>,
): Promise<CheckResult> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const took = () => Math.round(performance.now() - start);
  try {
    const said = await Promise.race([ask(), late]);
    return { name, ok: true, detail: typeof said === 'string' ? said : 'ok', latency_ms: took() };
  } catch (err) {
    return { name, ok: false, detail: err instanceof Error ? err.message : String(err), latency_ms: took() };
  } finally {
    clearTimeout(timer);
  }
}

/** A check that the app's own service loop is running (not starting, stopping or failed). */
export function runningCheck(name: string, service: { readonly state: string }): ReadinessCheck {
  return {
    name,
    check: () =>
      service.state === 'started'
        ? Promise.resolve('started')
        : Promise.reject(new Error(`it is ${service.state}`)),
  };
}

/**
 * `GET /readyz`: every check at once, each bounded by `timeoutMs` (default 2,000): 200 with each
 * check's outcome when all answer, else 503 naming the ones that did not. Liveness (`/healthz`)
 * stays a plain 200: a dependency being down is no reason to restart the app.
 */
export function readinessHandler(checks: readonly ReadinessCheck[], timeoutMs = 2000) {
  return async (_req: unknown, reply: FastifyReply) => {
    const results = await Promise.all(checks.map((c) => probe(c.name, timeoutMs, c.check)));
    const ready = results.every((r) => r.ok);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: results });
  };
}
