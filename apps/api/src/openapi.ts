import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import {
  attemptViewSchema,
  jobViewSchema,
  keyViewSchema,
  previewEntrySchema,
  problemSchema,
  replaySchema,
  scheduleViewSchema,
} from './api-schemas.js';
import type { JobLimits } from '@kairos/core';
import { jsonOf } from './route-docs.js';

/** Path of the docs page; its assets are served under it. */
export const DOCS_PREFIX = '/docs';

/**
 * Describes the API as OpenAPI 3.1 from the routes' schemas (register before any route). The
 * handlers validate with core's zod schemas, answering problem+json that names every field, so
 * Fastify's own ajv validation and schema-driven serialization are turned off: the route schemas
 * describe the API, they do not decide it.
 */
export async function installOpenApi(app: FastifyInstance, limits: JobLimits): Promise<void> {
  app.setValidatorCompiler(() => (data: unknown) => ({ value: data }));
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
  const shared = {
    Problem: problemSchema,
    Job: jobViewSchema,
    Attempt: attemptViewSchema,
    FireTime: previewEntrySchema,
    ApiKey: keyViewSchema,
    Schedule: scheduleViewSchema(limits),
    Replay: replaySchema,
  };
  for (const [id, schema] of Object.entries(shared)) app.addSchema({ $id: id, ...jsonOf(schema) });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Kairos',
        version: '1',
        description:
          "Jobs at a time, once or on a cron schedule, dispatched through Kafka. Every route but /healthz needs an API key; the tenant comes from the key. A tenant's admin key administers its tenant; routes marked **System** act on the whole deployment and need an admin key of every tenant ('*').",
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: `Authorization: Bearer kairos_…`',
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
}

/** The document at /openapi.json and a docs page at /docs (assets bundled, no CDN); after the routes. */
export async function serveOpenApi(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { config: { scope: 'public' }, schema: { hide: true } }, () => app.swagger());
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, staticCSP: true });
}
