import type { FastifyInstance } from 'fastify';
import { systemStatusSchema } from './api-schemas.js';
import { documented, jsonOf } from './route-docs.js';
import { readSystemStatus, type StatusSources } from './system-status.js';

/**
 * `GET /v1/status`: the API's dependencies and every Kairos consumer group's lag. A system route:
 * it shows every tenant's consumers, their hosts and the dependencies' errors.
 */
export function statusRoutes(app: FastifyInstance, sources: StatusSources): void {
  app.get(
    '/v1/status',
    documented('system', {
      summary: "Dependencies and the apps' consumer groups with their lag",
      description:
        'PostgreSQL, Kafka and the schema registry as the API reaches them (each bounded in time), and every consumer group whose id starts with `<topic prefix>kairos-`: its state, live members (the app instances) and lag per topic and partition.',
      tag: 'health',
      ok: { 200: { description: 'the status', schema: jsonOf(systemStatusSchema) } },
    }),
    () => readSystemStatus(sources),
  );
}
