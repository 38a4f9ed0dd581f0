import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An alert as an Alertmanager-compatible webhook receives it. */
export type PostedAlert = Record<string, unknown> & { labels: Record<string, string>; endsAt?: string };

/** A webhook receiver that keeps every alert posted to it. */
export async function receiver(): Promise<{
  url: string;
  alerts: PostedAlert[];
  close(): Promise<void>;
}> {
  const alerts: PostedAlert[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      alerts.push(...(JSON.parse(text) as PostedAlert[]));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2/alerts`,
    alerts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
