import { scopedTenant, validTraceparent } from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyRequest } from 'fastify';

/** The W3C trace context a request carries (null when absent or malformed: treated as none). */
export function traceparentOf(req: FastifyRequest): string | null {
  return validTraceparent(req.headers.traceparent);
}

/** The caller's tenant scope for a command on an existing job or schedule (another tenant's: 404). */
export function tenantOf(req: FastifyRequest): { tenantId?: string } {
  const tenantId = scopedTenant(callerOf(req));
  return tenantId === undefined ? {} : { tenantId };
}
