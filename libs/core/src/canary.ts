import type { JobSpec } from './job.js';
import { DEFAULT_RETRY_BACKOFF } from './retry.js';

/**
 * Canaries: a tiny job per resource class, created on a period, that goes the whole way (row +
 * outbox → Debezium → delay tier → class topic → a worker → result → tracker). Their tenant does
 * not match the tenant name rule, so no API key, request or schedule can ever name it: canaries
 * are never tenant work, and no tenant sees them.
 */
export const CANARY_TENANT = '_kairos';
/** The job type every worker of the SDK answers by itself, without user code. */
export const CANARY_TYPE = 'kairos.canary';

/**
 * The canary of `resourceClass` for the period that contains `now` (one per class and period,
 * whichever tracker makes it); `again` is the one sent halfway through when the first is lost.
 */
export function canarySpec(resourceClass: string, now: Date, periodMs: number, again = false): JobSpec {
  const period = Math.floor(now.getTime() / periodMs);
  return {
    tenantId: CANARY_TENANT,
    type: CANARY_TYPE,
    resourceClass,
    payload: '{}',
    dueAt: now,
    // A canary that cannot run within a few periods says so by expiring, not by running late.
    deadlineAt: new Date(now.getTime() + 5 * periodMs),
    idempotencyKey: `canary:${resourceClass}:${periodMs}:${period}${again ? ':again' : ''}`,
    maxAttempts: 1,
    retry: DEFAULT_RETRY_BACKOFF,
  };
}

/** Whether a class's canaries have stalled: none succeeded within `stallMs` (counting from when watching began). */
export function canaryStalled(
  lastSuccessMs: number | null,
  watchingSinceMs: number,
  nowMs: number,
  stallMs: number,
): boolean {
  return nowMs - Math.max(lastSuccessMs ?? -Infinity, watchingSinceMs) > stallMs;
}

/** The alert of a class whose canaries stalled (the tracker raises it; the API's overview shows it). */
export function canaryStalledAlert(resourceClass: string, stallMs: number): Alert {
  return {
    name: 'canary_stalled',
    labels: { resource_class: resourceClass },
    summary: `no canary of resource class ${resourceClass} completed for ${Math.round(stallMs / 1000)} s or more: jobs of this class may not be running`,
  };
}

/** An alert as a notifier sends it: Alertmanager's labels and annotations. */
export interface Alert {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly summary: string;
}

export interface AlertChange {
  readonly alert: Alert;
  readonly change: 'raised' | 'cleared';
  /** When it was raised (for a cleared one too). */
  readonly since: Date;
}

const keyOf = (a: Alert): string =>
  `${a.name}{${Object.entries(a.labels)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;

/** The alerts now active, and which were raised or cleared by each evaluation. */
export class AlertBook {
  readonly #active = new Map<string, { alert: Alert; since: Date }>();

  /** Records whether `alert` holds now; the change, if its state changed. */
  set(alert: Alert, holds: boolean, now: Date): AlertChange | undefined {
    const key = keyOf(alert);
    const was = this.#active.get(key);
    if (holds && !was) {
      this.#active.set(key, { alert, since: now });
      return { alert, change: 'raised', since: now };
    }
    if (!holds && was) {
      this.#active.delete(key);
      return { alert: was.alert, change: 'cleared', since: was.since };
    }
    return undefined;
  }

  /** The active alerts with when each was raised. */
  active(): { alert: Alert; since: Date }[] {
    return [...this.#active.values()];
  }
}
