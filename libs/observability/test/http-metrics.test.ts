import { expect, test } from 'vitest';
import { createHttpMetrics, UNMATCHED_ROUTE } from '@kairos/observability';

test('HTTP request durations: route patterns, a fixed label for no route, bounded methods', async () => {
  const m = createHttpMetrics();
  m.observe('GET', '/v1/jobs/:id', 200, 0.003);
  m.observe('GET', undefined, 404, 0.001);
  m.observe('BREW', '/v1/jobs', 405, 0.001);
  m.observe('GET', '/v1/jobs/:id', 200, Number.NaN); // ignored, never thrown
  const text = await m.text();
  expect(text).toContain(
    'kairos_http_request_duration_seconds_count{method="GET",route="/v1/jobs/:id",status="200"} 1',
  );
  expect(text).toContain(
    `kairos_http_request_duration_seconds_count{method="GET",route="${UNMATCHED_ROUTE}",status="404"} 1`,
  );
  expect(text).toContain(
    'kairos_http_request_duration_seconds_count{method="_other",route="/v1/jobs",status="405"} 1',
  );
  expect(text).toMatch(/^process_cpu_seconds_total /m);
  expect(m.contentType).toMatch(/^text\/plain/);
});
