import rateLimit from '@fastify/rate-limit';
import { ANONYMOUS_ADMIN, KairosError, requireAccess, type Access, type Principal } from '@kairos/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyVerifier } from './key-verifier.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What a route needs: a scope of the key's tenant, `system` (an admin key of every tenant:
     * the route acts on the whole deployment), `any` (any valid key) or `public` (health, the
     * API description).
     */
    scope?: Access | 'public' | 'any';
  }
  interface FastifyRequest {
    /** The caller, set by the auth hook on every non-public route; null on public ones. */
    principal: Principal | null;
  }
}

export interface AuthOptions {
  /** Verifies API keys; `off`: every request is an any-tenant admin (local development only). */
  readonly keys: KeyVerifier | 'off';
  /** Requests per second of a key that has no rate of its own. Default: 1,000. */
  readonly defaultRatePerSec?: number;
  /** Paths whose routes plugins add without a scope (a docs page's assets): public. Default: none. */
  readonly publicPrefixes?: readonly string[];
}

export const DEFAULT_RATE_PER_SEC = 1000;

/** The caller of a non-public route (the auth hook has run). */
export function callerOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error(`route ${req.url} read its caller but is public`);
  return req.principal;
}

/**
 * Puts every route of `app` behind an API key: a route declares `config.scope` (or `public`),
 * a route that declares neither fails at registration, so nothing is open by omission. The key
 * is checked before the body is read (401 without one, 403 without the scope), then the key's
 * rate limit applies (429 with Retry-After), still before the body is parsed. Register it
 * before any route.
 */
export async function installAuth(app: FastifyInstance, options: AuthOptions): Promise<void> {
  const { keys } = options;
  const defaultRate = options.defaultRatePerSec ?? DEFAULT_RATE_PER_SEC;
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => {
    if (route.config?.scope === undefined && options.publicPrefixes?.some((p) => route.url.startsWith(p))) {
      route.config = { ...route.config, scope: 'public' };
    }
    if (route.config?.scope === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no scope (config.scope)`);
    }
  });
  // Callback style, not async: a key seen within its cache time is answered with no promise.
  app.addHook('onRequest', (req, _reply, done) => {
    const scope = req.routeOptions.config.scope;
    // No scope: the not-found handler (routes themselves always have one).
    if (scope === undefined || scope === 'public') return done();
    const admit = (principal: Principal): void => {
      req.principal = principal;
      if (scope !== 'any') requireAccess(principal, scope);
    };
    try {
      const known = keys === 'off' ? ANONYMOUS_ADMIN : keys.known(req.headers.authorization);
      if (known) return (admit(known), done());
    } catch (err) {
      return done(err as Error);
    }
    if (keys === 'off') return done();
    keys.verify(req.headers.authorization).then(
      (p) => {
        try {
          admit(p);
          done();
        } catch (err) {
          done(err as Error);
        }
      },
      (err: Error) => done(err),
    );
  });
  await app.register(rateLimit, {
    hook: 'preParsing',
    timeWindow: 1000,
    keyGenerator: (req) => req.principal?.keyId ?? `ip:${req.ip}`,
    max: (req) => req.principal?.ratePerSec ?? defaultRate,
    errorResponseBuilder: (_req, ctx) =>
      new KairosError(
        'RATE_LIMITED',
        `this API key may make ${ctx.max} requests per second; retry in ${ctx.after}`,
      ),
  });
}
