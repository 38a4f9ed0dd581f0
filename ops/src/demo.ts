/** A handful of demo jobs a few seconds out, followed from SCHEDULED to their final state. */
interface JobView {
  id: string;
  type: string;
  resource_class: string;
  state: string;
  due_at: string;
  dispatched_at: string | null;
  started_at: string | null;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'SKIPPED']);

/** The API key of every call (set by runDemo). */
let apiKey = '';

async function call<T>(url: string, init?: RequestInit): Promise<T> {
  const headers: Record<string, string> = init?.body ? { 'content-type': 'application/json' } : {};
  const res = await fetch(url, { ...init, headers: { ...headers, authorization: `Bearer ${apiKey}` } });
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * One job through the whole pipeline before the demo: on a cold stack the connector, consumer
 * groups and JITs take seconds to warm up, which would otherwise show up as demo lateness.
 */
async function warmUp(apiUrl: string, log: (line: string) => void): Promise<void> {
  const t0 = Date.now();
  const probe = await call<JobView>(`${apiUrl}/v1/jobs`, {
    method: 'POST',
    body: JSON.stringify({
      tenant: 'demo',
      type: 'demo.hello',
      resource_class: 'default',
      payload: { name: 'warm-up' },
    }),
  });
  while (Date.now() - t0 < 120_000) {
    const v = await call<JobView>(`${apiUrl}/v1/jobs/${probe.id}`);
    if (TERMINAL.has(v.state)) {
      log(`demo: a warm-up job went through the whole pipeline in ${Date.now() - t0} ms (${v.state})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  log('demo: the warm-up job did not finish within 120 s; see the app logs above');
}

export async function runDemo(apiUrl: string, key: string, log: (line: string) => void): Promise<void> {
  apiKey = key;
  await warmUp(apiUrl, log);
  const at = (s: number) => new Date(Date.now() + s * 1000).toISOString();
  const jobs = [
    { type: 'demo.hello', resource_class: 'critical', payload: { name: 'Ada' }, due_at: at(2) },
    { type: 'email.send', resource_class: 'io', payload: { to: 'ops@example.com' }, due_at: at(3) },
    { type: 'demo.hello', resource_class: 'default', payload: { name: 'Grace' }, due_at: at(4) },
    { type: 'report.build', resource_class: 'cpu', payload: { rows: 800 }, due_at: at(5) },
    { type: 'email.send', resource_class: 'io', payload: { to: 'team@example.com' }, due_at: at(6) },
    { type: 'demo.hello', resource_class: 'default', payload: { name: 'Edsger' }, due_at: at(8) },
    { type: 'demo.hello', resource_class: 'default', payload: { name: 'never runs' }, due_at: at(10) },
  ].map((j) => ({ tenant: 'demo', ...j }));
  const created = await call<{ jobs: JobView[] }>(`${apiUrl}/v1/jobs:batch`, {
    method: 'POST',
    body: JSON.stringify({ jobs }),
  });
  log(`demo: created ${created.jobs.length} jobs due in 2–10 s through POST /v1/jobs:batch`);
  const last = created.jobs.at(-1);
  if (last) {
    await call(`${apiUrl}/v1/jobs/${last.id}`, { method: 'DELETE' });
    log(`demo: cancelled ${last.id.slice(0, 13)}… (DELETE /v1/jobs/{id}); it will never run`);
  }
  const seen = new Map<string, string>();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const views = await Promise.all(created.jobs.map((j) => call<JobView>(`${apiUrl}/v1/jobs/${j.id}`)));
    for (const v of views) {
      if (seen.get(v.id) === v.state) continue;
      seen.set(v.id, v.state);
      const lag = v.dispatched_at
        ? ` dispatch lag ${Date.parse(v.dispatched_at) - Date.parse(v.due_at)} ms`
        : '';
      log(
        `demo: ${v.id.slice(0, 13)}… ${v.type.padEnd(12)} ${v.resource_class.padEnd(8)} → ${v.state}${lag}`,
      );
    }
    if (views.every((v) => TERMINAL.has(v.state))) {
      const done = views.filter((v) => v.state === 'SUCCEEDED').length;
      log(`demo: done — ${done} succeeded, ${views.length - done} cancelled`);
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  log('demo: not every job finished within 60 s; see the app logs above');
}
