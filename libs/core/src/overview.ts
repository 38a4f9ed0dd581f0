import { z } from 'zod';
import { KairosError } from './errors.js';
import { fieldErrorsOf } from './zod-errors.js';

/** `GET /v1/overview`'s query: a tenant (keys of every tenant), and how many minutes of lag history. */
export const overviewQuery = z
  .object({
    tenant: z.string().optional(),
    /** Minutes of dispatch lag history, the current one included. Default: 60. */
    minutes: z.coerce.number().int().min(1).max(1440).optional(),
  })
  .strict();

export interface OverviewQuery {
  readonly tenant: string | undefined;
  readonly minutes: number;
}

/** Validates the overview's query (the tenant itself is checked against the key by listTenant). */
export function parseOverviewQuery(query: unknown): OverviewQuery {
  const parsed = overviewQuery.safeParse(query ?? {});
  if (!parsed.success) {
    throw new KairosError('VALIDATION', 'invalid overview parameters', {
      fields: fieldErrorsOf(parsed.error, ''),
    });
  }
  return { tenant: parsed.data.tenant, minutes: parsed.data.minutes ?? 60 };
}
