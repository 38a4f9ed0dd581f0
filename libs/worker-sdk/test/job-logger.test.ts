import { pino } from 'pino';
import { expect, test } from 'vitest';
import { jobLogger } from '../src/job-logger.js';
import type { WorkerLogger } from '../src/options.js';

const BINDINGS = {
  jobId: 'j1',
  fence: 3,
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
};

test('a pino logger: the attempt logs through a child carrying the job and its trace, made on first use', () => {
  const lines: Record<string, unknown>[] = [];
  const base = pino(
    { level: 'info' },
    { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  );
  let children = 0;
  const counting = Object.assign(Object.create(base) as typeof base, {
    child: (b: Record<string, unknown>) => (children++, base.child(b)),
  });
  const log = jobLogger(counting, BINDINGS);
  expect(children).toBe(0);
  log.warn({ attempt: 1 }, 'handler failed');
  log.info({}, 'again');
  expect(children).toBe(1);
  expect(lines).toMatchObject([
    { ...BINDINGS, attempt: 1, msg: 'handler failed' },
    { ...BINDINGS, msg: 'again' },
  ]);
});

test('a logger without child: the bindings are merged into every line', () => {
  const calls: [string, object, string | undefined][] = [];
  const plain: WorkerLogger = {
    info: (o, m) => void calls.push(['info', o, m]),
    warn: (o, m) => void calls.push(['warn', o, m]),
    error: (o, m) => void calls.push(['error', o, m]),
  };
  jobLogger(plain, BINDINGS).error({ err: 'x' }, 'result not published');
  expect(calls).toEqual([['error', { ...BINDINGS, err: 'x' }, 'result not published']]);
});
