import { ANY_TENANT, listTenant, overviewQuery, parseOverviewQuery } from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyInstance } from 'fastify';
import { overviewSchema } from './api-schemas.js';
import { readOverview, type OverviewSources } from './overview.js';
import { documented, jsonOf, queryOf } from './route-docs.js';

/** `GET /v1/overview`: the console's overview page in one answer. */
export function overviewRoutes(app: FastifyInstance, sources: OverviewSources): void {
  app.get(
    '/v1/overview',
    documented('jobs:read', {
      summary: 'Jobs by state, dispatch lag, canaries, alerts and PostgreSQL-only partitions',
      description:
        "What the console's overview shows, from PostgreSQL alone (no Prometheus needed): live jobs and dead letters by tenant, class and state; due → dispatch lag p50/p99/max per class and minute over the last `minutes` (default 60, at most 1,440); the active alerts by the tracker's rules. A tenant's key sees its own tenant (and its schedules' alerts); a key of every tenant sees every tenant (or `tenant`), the canaries and the partitions running PostgreSQL-only.",
      tag: 'health',
      query: queryOf(overviewQuery),
      ok: { 200: { description: 'the overview', schema: jsonOf(overviewSchema) } },
      errors: [400],
    }),
    async (req) => {
      const q = parseOverviewQuery(req.query);
      const caller = callerOf(req);
      const tenant = listTenant(caller, q.tenant);
      return readOverview(sources, { tenant, system: caller.tenant === ANY_TENANT, minutes: q.minutes });
    },
  );
}
