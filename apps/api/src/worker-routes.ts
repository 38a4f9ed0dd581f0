import type { FastifyInstance, FastifyRequest } from 'fastify';
import { workerGroupSchema, workerGroupsSchema } from './api-schemas.js';
import { documented, jsonOf } from './route-docs.js';
import type { StatusSources } from './system-status.js';
import { readWorkerGroups, retireWorkerGroup } from './worker-groups.js';

/**
 * `GET /v1/workers` and `DELETE /v1/workers/{group}`: worker services, seen and retired. System
 * routes: a worker service serves every tenant.
 */
export function workerRoutes(app: FastifyInstance, sources: StatusSources): void {
  app.get(
    '/v1/workers',
    documented('system', {
      summary: 'Worker services: their groups, classes, job types, members and lag',
      description:
        "Every worker service's consumer group: what its workers announce on `kairos.workers` (service name, resource classes, handled job types, each instance and when it was last heard from; live: within 3 heartbeat intervals) with Kafka's state, members and lag of the group. Groups of the default id that no worker announced (an older SDK) are listed too.",
      tag: 'health',
      ok: { 200: { description: 'the worker groups', schema: jsonOf(workerGroupsSchema) } },
    }),
    async () => ({ groups: await readWorkerGroups(sources) }),
  );

  app.delete(
    '/v1/workers/:group',
    documented('system', {
      summary: 'Retire a worker group no service uses any more',
      description:
        "Deletes the group's committed offsets, so it leaves `kairos status`, the lag metrics and their alerts, and forgets its workers on `kairos.workers`. Refused (409) while the group has members: stop its workers first.",
      tag: 'health',
      params: ['group'],
      ok: { 200: { description: 'the group as it was, retired', schema: jsonOf(workerGroupSchema) } },
      errors: [404, 409],
    }),
    (req: FastifyRequest<{ Params: { group: string } }>) => retireWorkerGroup(sources, req.params.group),
  );
}
