import { KairosError } from '@kairos/core';
import type { LedgerEntry } from '@kairos/db';

/** A request key: commands requested under it apply at most once per tenant (the Kafka ingress). */
export interface RequestKey {
  readonly tenantId: string;
  readonly key: string;
}

/** The request key of a command's context, if it has one (a key needs its tenant). */
export function requestKeyOf(ctx: {
  readonly tenantId?: string;
  readonly requestKey?: string;
}): RequestKey | undefined {
  if (ctx.requestKey === undefined) return undefined;
  if (ctx.tenantId === undefined) throw new RangeError('requestKey needs tenantId');
  return { tenantId: ctx.tenantId, key: ctx.requestKey };
}

/**
 * A key that a command of the other kind already used (a job command's key reused for a schedule
 * command, or the reverse): there is nothing of this kind to answer the repeat with, so it is the
 * request's key that is wrong.
 */
export function keyUsedElsewhere(held: LedgerEntry): KairosError {
  const what = held.scheduleId !== null ? `schedule ${held.scheduleId}` : `job ${held.jobId ?? '?'}`;
  return new KairosError('VALIDATION', `idempotency key already applied by ${held.command} of ${what}`, {
    fields: [
      {
        field: 'idempotency_key',
        message: `already applied by ${held.command} of ${what}; give each request its own key`,
      },
    ],
  });
}
