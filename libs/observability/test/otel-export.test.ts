import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endHopSpan, startHopSpan, tracingRegistered } from '@kairos/core';
import { silentLogger, startOtelExport } from '@kairos/observability';
import { afterEach, expect, test } from 'vitest';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

let close: (() => Promise<void>) | undefined;
afterEach(async () => close?.());

test('no endpoint: nothing registered, hops stay no-ops', async () => {
  expect(await startOtelExport({ tracesUrl: undefined, serviceName: 'kairos-test' }, silentLogger())).toBe(
    undefined,
  );
  expect(tracingRegistered()).toBe(false);
});

test('an endpoint: hop spans are exported over OTLP/HTTP, flushed on shutdown', async () => {
  const posts: { url: string | undefined; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('latin1')));
    req.on('end', () => {
      posts.push({ url: req.url, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  close = () => new Promise((r) => server.close(() => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;

  const otel = await startOtelExport({ tracesUrl: url, serviceName: 'kairos-test' }, silentLogger());
  expect(tracingRegistered()).toBe(true);
  endHopSpan(startHopSpan('kairos.test.hop', PARENT, { attributes: { 'kairos.job.id': 'j1' } }));
  await otel!.shutdown();
  expect(tracingRegistered()).toBe(false);

  expect(posts.map((p) => p.url)).toEqual(['/v1/traces']);
  // The payload (protobuf or JSON, the exporter's choice) names the span, the service and the job.
  for (const text of ['kairos.test.hop', 'kairos-test', 'j1']) expect(posts[0]!.body).toContain(text);
});
