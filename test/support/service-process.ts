/**
 * A worker service of a user's, in its own process: `service` named, handling only the job types
 * its SERVICE_ENV (JSON) lists, on the namespace's classes. Each handler says on stdout
 * `RAN <service> <type> <job> <fence>` once it has run (after `payload.ms`, default 0), so a test
 * counts every handler call of every job across processes; `READY` once started, `STOPPED` after
 * a SIGTERM's clean stop.
 */
import { Worker } from '@kairos/worker-sdk';
import { say, workerOptions, type WorkerServices } from './worker-serve.js';

interface ServiceEnv extends WorkerServices {
  readonly service: string;
  readonly types: readonly string[];
  readonly registryIntervalMs?: number;
}

const env = JSON.parse(process.env.SERVICE_ENV ?? '{}') as ServiceEnv;
const worker = new Worker({
  ...workerOptions(env),
  service: env.service,
  concurrency: 20,
  ...(env.registryIntervalMs === undefined ? {} : { registryIntervalMs: env.registryIntervalMs }),
});
for (const type of env.types) {
  worker.handle<{ ms?: number }>(type, async (payload, ctx) => {
    if (payload.ms) await new Promise((r) => setTimeout(r, payload.ms));
    say(`RAN ${env.service} ${type} ${ctx.jobId} ${ctx.fence}`);
  });
}
await worker.start();
say('READY');
process.once('SIGTERM', () => {
  void worker.stop().then(() => {
    say('STOPPED');
    process.exit(0);
  });
});
