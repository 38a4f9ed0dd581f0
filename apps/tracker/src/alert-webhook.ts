import type { AlertBook, AlertChange } from '@kairos/core';
import type { Logger } from '@kairos/observability';
import type { AlertNotifier } from './canary.js';

/** How long a webhook may take to answer, ms. */
const TIMEOUT_MS = 5000;

type Sent = { alert: AlertChange['alert']; since: Date; endsAt?: Date };

/** Alertmanager's alert shape (POST /api/v2/alerts): what most alert routers accept. */
function alertmanagerAlert(a: Sent): Record<string, unknown> {
  return {
    labels: { alertname: a.alert.name, service: 'kairos', severity: 'page', ...a.alert.labels },
    // Its page in this repository (ops/runbooks/), as the Prometheus rules' runbook_url.
    annotations: { summary: a.alert.summary, runbook_url: `ops/runbooks/${a.alert.name}.md` },
    startsAt: a.since.toISOString(),
    ...(a.endsAt ? { endsAt: a.endsAt.toISOString() } : {}),
  };
}

/**
 * Posts alerts as an Alertmanager-compatible JSON array to `url` (Alertmanager's
 * `/api/v2/alerts`, or any receiver of that shape): every active alert, and each cleared one with
 * its `endsAt`, so the receiver resolves it. A receiver that does not answer 2xx is an error.
 */
export function alertWebhook(url: string, now: () => Date = () => new Date()): AlertNotifier {
  return async (changes, active) => {
    const cleared = changes
      .filter((c) => c.change === 'cleared')
      .map((c): Sent => ({ alert: c.alert, since: c.since, endsAt: now() }));
    const body = [...active, ...cleared].map(alertmanagerAlert);
    if (body.length === 0) return;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`alert webhook ${url} answered ${res.status}`);
  };
}

/** Sends alert changes to the notifier, if any; one that fails is logged, never thrown. */
export async function sendAlerts(
  notify: AlertNotifier | undefined,
  changes: readonly AlertChange[],
  active: ReturnType<AlertBook['active']>,
  log: Logger,
): Promise<void> {
  try {
    await notify?.(changes, active);
  } catch (err) {
    log.warn({ err }, 'alert notification failed; the metric and the log line stand');
  }
}
