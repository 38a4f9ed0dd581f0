import { KairosError, listTenant, parseJobSearch } from '@kairos/core';
import { searchJobs, type Pool } from '@kairos/db';
import { callerOf } from '@kairos/http';
import type { FastifyInstance } from 'fastify';
import { jobView } from './views.js';

type Query = Record<string, string | undefined>;

/**
 * Dead letters: jobs that FAILED for good (a permanent failure, or every attempt used), the same
 * jobs the tracker sent to `kairos.dlq.<class>`. Listed with every filter of the job search.
 */
export function dlqRoutes(app: FastifyInstance, pool: Pool): void {
  app.get<{ Querystring: Query }>('/v1/dead-letters', { config: { scope: 'dlq:read' } }, async (req) => {
    if (req.query.state !== undefined) {
      throw new KairosError('VALIDATION', 'dead letters are FAILED jobs', {
        fields: [{ field: 'state', message: 'not a filter here: every dead letter is FAILED' }],
      });
    }
    const search = parseJobSearch(req.query, listTenant(callerOf(req), req.query.tenant));
    const page = await searchJobs(pool, { ...search, states: ['FAILED'] });
    return { dead_letters: page.jobs.map(jobView), next_cursor: page.nextCursor };
  });
}
