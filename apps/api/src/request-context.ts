import { scopedTenant } from '@kairos/core';
import { callerOf } from '@kairos/http';
import type { FastifyRequest } from 'fastify';

/** The W3C trace context a request carries, for the events its command writes. */
export function traceparentOf(req: FastifyRequest): string | null {
  const h = req.headers.traceparent;
  return typeof h === 'string' ? h : null;
}

/** The caller's tenant scope for a command on an existing job or schedule (another tenant's: 404). */
export function tenantOf(req: FastifyRequest): { tenantId?: string } {
  const tenantId = scopedTenant(callerOf(req));
  return tenantId === undefined ? {} : { tenantId };
}
