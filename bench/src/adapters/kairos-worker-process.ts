/**
 * A worker service on the public Kairos SDK, in its own process (as users run one): every Kairos
 * workload's worker, and the one the crash and failover workloads SIGKILL. By default it handles
 * type `bench` on the class `default` in the bench's one group; given BENCH_SERVICE (W12), it is
 * that named service, handling only BENCH_JOB_TYPE on BENCH_CLASS from the service's own topics.
 */
import { Worker } from '@kairos/worker-sdk';
import type { BenchEnv } from '../adapter.js';

const env = JSON.parse(process.env.BENCH_ENV ?? '{}') as BenchEnv;
const handlerMs = Number(process.env.BENCH_HANDLER_MS ?? '0');
const service = process.env.BENCH_SERVICE;
const worker = new Worker({
  brokers: env.kafkaBrokers.split(','),
  registryUrl: env.registryUrl,
  resourceClasses: [process.env.BENCH_CLASS ?? 'default'],
  topicPrefix: `b${env.namespace}.`,
  redisUrl: env.redisUrl,
  redisKeyPrefix: `b${env.namespace}.`,
  // A named service has a group of its own (the SDK's default for it).
  ...(service === undefined ? { groupId: `b${env.namespace}.workers` } : { service }),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? '10'),
});
worker.handle<{ key: string }>(process.env.BENCH_JOB_TYPE ?? 'bench', async (payload) => {
  process.stdout.write(`START ${payload.key} ${Date.now()} ${service ?? '-'}\n`);
  if (handlerMs > 0) await new Promise((r) => setTimeout(r, handlerMs));
  process.stdout.write(`DONE ${payload.key}\n`);
});
await worker.start();
process.stdout.write('READY\n');
process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
