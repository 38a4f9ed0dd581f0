import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { alertWebhook } from '../src/alert-webhook.js';

test('alerts go out in Alertmanager shape: the active ones, and a cleared one with its endsAt', async () => {
  const bodies: unknown[] = [];
  let status = 200;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      bodies.push(JSON.parse(text));
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/alerts`;
    const now = new Date('2026-12-03T10:05:00Z');
    const send = alertWebhook(url, () => now);
    const alert = { name: 'canary_stalled', labels: { resource_class: 'io' }, summary: 'io stalled' };
    const since = new Date('2026-12-03T10:00:00Z');
    await send([{ alert, change: 'raised', since }], [{ alert, since }]);
    await send([{ alert, change: 'cleared', since }], []);
    await send([], []); // nothing to say: nothing sent
    expect(bodies).toEqual([
      [
        {
          labels: { alertname: 'canary_stalled', service: 'kairos', severity: 'page', resource_class: 'io' },
          annotations: { summary: 'io stalled', runbook_url: 'ops/runbooks/canary_stalled.md' },
          startsAt: '2026-12-03T10:00:00.000Z',
        },
      ],
      [
        {
          labels: { alertname: 'canary_stalled', service: 'kairos', severity: 'page', resource_class: 'io' },
          annotations: { summary: 'io stalled', runbook_url: 'ops/runbooks/canary_stalled.md' },
          startsAt: '2026-12-03T10:00:00.000Z',
          endsAt: '2026-12-03T10:05:00.000Z',
        },
      ],
    ]);
    status = 500;
    await expect(send([], [{ alert, since }])).rejects.toThrow(/answered 500/);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
