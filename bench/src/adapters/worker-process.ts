/**
 * A peer's worker in a child process, for the crash workload. Configured through the environment
 * (see workerProcessCommand); prints `START <key> <ms>` and `DONE <key>` lines; stops cleanly on SIGTERM.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchEnv } from '../adapter.js';
import { peerNames, type PeerName, type StartWorker } from './common.js';

// Only the peer asked for is loaded, so a worker process doesn't pay for the other two clients.
const starters: Record<PeerName, () => Promise<StartWorker>> = {
  bullmq: async () => (await import('./bullmq.js')).startBullmqWorker,
  'pg-boss': async () => (await import('./pg-boss.js')).startPgBossWorker,
  'graphile-worker': async () => (await import('./graphile-worker.js')).startGraphileWorker,
};

function fromEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

function intFromEnv(name: string, min: number): number {
  const value = Number(fromEnv(name));
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

const adapter = fromEnv('BENCH_ADAPTER');
if (!(peerNames as readonly string[]).includes(adapter)) throw new Error(`unknown BENCH_ADAPTER ${adapter}`);
const env = JSON.parse(fromEnv('BENCH_ENV')) as BenchEnv;
const concurrency = intFromEnv('BENCH_CONCURRENCY', 1);
const handlerMs = intFromEnv('BENCH_HANDLER_MS', 0);

// Registered before startup so a SIGTERM that arrives early still ends in a clean stop.
const terminated = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));

const start = await starters[adapter as PeerName]();
const stop = await start(env, concurrency, async (key) => {
  process.stdout.write(`START ${key} ${Date.now()}\n`);
  await sleep(handlerMs);
  process.stdout.write(`DONE ${key}\n`);
});
await terminated;
await stop();
