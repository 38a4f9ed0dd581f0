/**
 * A worker service on the public Kairos SDK, in its own process (as users run one): every Kairos
 * workload's worker, and the one the crash and failover workloads SIGKILL.
 */
import { Worker } from '@kairos/worker-sdk';
import type { BenchEnv } from '../adapter.js';

const env = JSON.parse(process.env.BENCH_ENV ?? '{}') as BenchEnv;
const handlerMs = Number(process.env.BENCH_HANDLER_MS ?? '0');
const worker = new Worker({
  brokers: env.kafkaBrokers.split(','),
  registryUrl: env.registryUrl,
  resourceClasses: ['default'],
  topicPrefix: `b${env.namespace}.`,
  redisUrl: env.redisUrl,
  redisKeyPrefix: `b${env.namespace}.`,
  groupId: `b${env.namespace}.workers`,
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? '10'),
});
worker.handle<{ key: string }>('bench', async (payload) => {
  process.stdout.write(`START ${payload.key} ${Date.now()}\n`);
  if (handlerMs > 0) await new Promise((r) => setTimeout(r, handlerMs));
  process.stdout.write(`DONE ${payload.key}\n`);
});
await worker.start();
process.stdout.write('READY\n');
process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
