import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { startDeployment } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

/** `kairos_http_request_duration_seconds_count` of one label set in the API's /metrics (0 if absent). */
async function requestCount(metricsUrl: string, labels: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`kairos_http_request_duration_seconds_count{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

test('the API exports request durations by route pattern on its own metrics port, open to scrapers', async () => {
  const ns = await useNamespace('api-metrics');
  const d = await startDeployment(ns, { apps: ['api'] });
  expect(d.apiMetricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(d.apiMetricsUrl).not.toBe(d.apiUrl);
  const auth = { authorization: `Bearer ${d.apiKey}` };

  // Two different job ids: one series, labelled by the route pattern, never by the raw URL.
  const byId = 'method="GET",route="/v1/jobs/:id",status="404"';
  const ids = [randomUUID(), randomUUID()];
  for (const id of ids)
    expect((await fetch(`${d.apiUrl}/v1/jobs/${id}`, { headers: auth })).status).toBe(404);
  await eventually(
    'two GET /v1/jobs/:id in the histogram',
    async () => (await requestCount(d.apiMetricsUrl, byId)) === 2,
  );

  // An unknown route is one fixed label; a refused key still counts under its route.
  expect((await fetch(`${d.apiUrl}/no/such/${randomUUID()}`, { headers: auth })).status).toBe(404);
  expect((await fetch(`${d.apiUrl}/v1/jobs/${ids[0]}`)).status).toBe(401);
  await eventually(
    'the 404 and the 401 counted',
    async () =>
      (await requestCount(d.apiMetricsUrl, 'method="GET",route="_unmatched",status="404"')) === 1 &&
      (await requestCount(d.apiMetricsUrl, 'method="GET",route="/v1/jobs/:id",status="401"')) === 1,
  );

  const text = await (await fetch(`${d.apiMetricsUrl}/metrics`)).text();
  for (const id of ids) expect(text).not.toContain(id);
  expect(text).toMatch(
    /kairos_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/jobs\/:id",status="404"\} \d+/,
  );
  expect(text).toMatch(/^process_cpu_seconds_total /m);
  // The API port itself serves no /metrics: what is open there is health and the docs only.
  expect((await fetch(`${d.apiUrl}/metrics`, { headers: auth })).status).toBe(404);
});
