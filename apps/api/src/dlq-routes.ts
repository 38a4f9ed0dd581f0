import { jobSearchQuery, KairosError, listTenant, parseJobSearch } from '@kairos/core';
import { searchJobs, type Pool } from '@kairos/db';
import { callerOf } from '@kairos/http';
import type { FastifyInstance } from 'fastify';
import { documented, jsonOf, ref } from './route-docs.js';
import { jobView } from './views.js';

type Query = Record<string, string | undefined>;

/**
 * Dead letters: jobs that FAILED for good (a permanent failure, or every attempt used), the same
 * jobs the tracker sent to `kairos.dlq.<class>`. Listed with every filter of the job search.
 */
export function dlqRoutes(app: FastifyInstance, pool: Pool): void {
  const { state: _state, ...filters } = jsonOf(jobSearchQuery, 'input').properties as Record<string, unknown>;
  app.get<{ Querystring: Query }>(
    '/v1/dead-letters',
    documented('dlq:read', {
      summary: 'Dead letters: the FAILED jobs, with the filters of the job search but state',
      tag: 'dead letters',
      query: { type: 'object', properties: filters, additionalProperties: false },
      ok: {
        200: {
          description: 'one page, newest first',
          schema: {
            type: 'object',
            properties: {
              dead_letters: { type: 'array', items: ref('Job') },
              next_cursor: { type: ['string', 'null'] },
            },
            required: ['dead_letters', 'next_cursor'],
          },
        },
      },
      errors: [400],
    }),
    async (req) => {
      if (req.query.state !== undefined) {
        throw new KairosError('VALIDATION', 'dead letters are FAILED jobs', {
          fields: [{ field: 'state', message: 'not a filter here: every dead letter is FAILED' }],
        });
      }
      const search = parseJobSearch(req.query, listTenant(callerOf(req), req.query.tenant));
      const page = await searchJobs(pool, { ...search, states: ['FAILED'] });
      return { dead_letters: page.jobs.map(jobView), next_cursor: page.nextCursor };
    },
  );
}
