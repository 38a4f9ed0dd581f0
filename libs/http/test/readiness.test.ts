import Fastify from 'fastify';
import { expect, test } from 'vitest';
import { readinessHandler, runningCheck } from '../src/index.js';

test('/readyz: 200 when every dependency answers; 503 naming the one that fails or hangs, each bounded in time', async () => {
  const service = { state: 'started' };
  let pg: () => Promise<unknown> = () => Promise.resolve();
  const app = Fastify();
  app.get(
    '/readyz',
    readinessHandler(
      [
        { name: 'postgresql', check: () => pg() },
        { name: 'registry', check: () => Promise.resolve('3 subject(s)') },
        runningCheck('tracker', service),
      ],
      100,
    ),
  );
  try {
    const ok = await app.inject('/readyz');
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      status: 'ready',
      checks: [
        { name: 'postgresql', ok: true, detail: 'ok' },
        { name: 'registry', ok: true, detail: '3 subject(s)' },
        { name: 'tracker', ok: true, detail: 'started' },
      ],
    });
    pg = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:55432'));
    service.state = 'stopping';
    const down = await app.inject('/readyz');
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({
      status: 'not ready',
      checks: [
        { name: 'postgresql', ok: false, detail: 'connect ECONNREFUSED 127.0.0.1:55432' },
        { name: 'registry', ok: true },
        { name: 'tracker', ok: false, detail: 'it is stopping' },
      ],
    });
    pg = () => new Promise(() => undefined); // never answers
    const hung = await app.inject('/readyz');
    expect(hung.statusCode).toBe(503);
    expect(hung.json<{ checks: { detail: string }[] }>().checks[0]!.detail).toBe('no answer within 100 ms');
  } finally {
    await app.close();
  }
});
