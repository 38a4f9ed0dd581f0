import { EnvError, intVar } from './env-vars.js';

/** How an HTTP server of Kairos (the API, the delay tier's admin) checks its callers. */
export interface HttpAuthEnv {
  /**
   * KAIROS_API_AUTH: `keys` (default; every route but /healthz needs an API key) or `off` (every
   * caller is an admin of every tenant; refused unless the API listens on loopback).
   */
  readonly auth: 'keys' | 'off';
  /** KAIROS_API_KEY_CACHE_MS: how long a key read from PostgreSQL is trusted, default 5,000. */
  readonly keyCacheMs: number;
  /** KAIROS_API_RATE_PER_SEC: requests per second of a key without a rate of its own, default 1,000. */
  readonly defaultRatePerSec: number;
}

/** The HTTP API's listener and authentication settings. */
export interface ApiEnv extends HttpAuthEnv {
  /** KAIROS_API_PORT, default 58090 (0 = random). */
  readonly port: number;
  /** KAIROS_API_HOST, default 127.0.0.1. */
  readonly host: string;
  /**
   * KAIROS_API_METRICS_HOST / _PORT: where the API's /metrics listens, default 127.0.0.1:58094
   * (0: any free port). A port of its own, open to scrapers, so the API port keeps every route
   * but health behind a key.
   */
  readonly metricsHost: string;
  readonly metricsPort: number;
  /** KAIROS_REPLAY_STALE_MS: a replay whose runner has been quiet this long is resumed by another, default 15,000. */
  readonly replayStaleMs: number;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function apiEnv(env: NodeJS.ProcessEnv = process.env): ApiEnv {
  const host = env.KAIROS_API_HOST ?? '127.0.0.1';
  return {
    port: intVar(env, 'KAIROS_API_PORT', 58090, 0, 65535),
    host,
    metricsHost: env.KAIROS_API_METRICS_HOST ?? '127.0.0.1',
    metricsPort: intVar(env, 'KAIROS_API_METRICS_PORT', 58094, 0, 65535),
    replayStaleMs: intVar(env, 'KAIROS_REPLAY_STALE_MS', 15_000, 1000, 3_600_000),
    ...httpAuthEnv(env, host, 'KAIROS_API_HOST'),
  };
}

/** The authentication settings of a server listening on `host` (named by `hostVar` in errors). */
export function httpAuthEnv(env: NodeJS.ProcessEnv, host: string, hostVar: string): HttpAuthEnv {
  const auth = env.KAIROS_API_AUTH ?? 'keys';
  if (auth !== 'keys' && auth !== 'off') {
    throw new EnvError(`KAIROS_API_AUTH=${auth} must be keys or off`);
  }
  if (auth === 'off' && !LOOPBACK.has(host)) {
    throw new EnvError(
      `KAIROS_API_AUTH=off is for local development: listen on loopback then, not ${hostVar}=${host}`,
    );
  }
  return {
    auth,
    keyCacheMs: intVar(env, 'KAIROS_API_KEY_CACHE_MS', 5000, 0, 3_600_000),
    defaultRatePerSec: intVar(env, 'KAIROS_API_RATE_PER_SEC', 1000, 1, 1_000_000),
  };
}
