import type { HopLagMetric } from '@kairos/observability';
import type { TaskResultRecord } from '@kairos/schemas';

/**
 * The hops the tracker sees, from a committed batch of reports: dispatch → start (a start's
 * report), start → finish and finish → recorded (an outcome's). Reports of workers older than
 * the class and dispatch fields carry no class: counted under `unknown`, without dispatch → start.
 */
export function observeHops(
  hops: HopLagMetric,
  reports: readonly TaskResultRecord[],
  recordedAtMs: number,
): void {
  for (const r of reports) {
    const cls = r.resource_class ?? 'unknown';
    if (r.outcome === 'STARTED') {
      if (r.dispatched_at != null)
        hops.observe('dispatch_to_start', cls, r.tenant_id, (r.started_at - r.dispatched_at) / 1000);
      continue;
    }
    hops.observe('start_to_finish', cls, r.tenant_id, (r.finished_at - r.started_at) / 1000);
    hops.observe('finish_to_recorded', cls, r.tenant_id, (recordedAtMs - r.finished_at) / 1000);
  }
}
