import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the downstream answered. */
export interface DownstreamCall {
  /** Milliseconds since the drill started. */
  readonly atMs: number;
  readonly job: string;
  readonly attempt: number;
  readonly status: number;
}

/**
 * The retry-storm drill's dependency (a payment gateway, say): a real HTTP server in the drill's
 * process that answers 503 while it is down and 200 otherwise, and keeps every call it answered.
 */
export class Downstream {
  readonly calls: DownstreamCall[] = [];
  #down = false;
  #server: Server | undefined;
  url = '';

  /** `clock` gives the drill's time (ms since it started) for each call. */
  constructor(private readonly clock: () => number) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const status = this.#down ? 503 : 200;
        this.calls.push({
          atMs: this.clock(),
          job: String(req.headers['x-job-id'] ?? ''),
          attempt: Number(req.headers['x-attempt'] ?? 0),
          status,
        });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'unavailable');
      });
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charge`;
  }

  /** Down: every call gets a 503 from now on; up: every call a 200. */
  set down(down: boolean) {
    this.#down = down;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
