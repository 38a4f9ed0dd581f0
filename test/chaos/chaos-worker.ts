/**
 * The chaos suite's worker service, in its own process (so the suite can SIGKILL or SIGSTOP it),
 * on the public worker SDK only. Configured by CHAOS_WORKER_ENV (JSON: services, prefix, schema,
 * classes, its service's name and job types, and its group). Its handler of each of its types
 * sleeps `payload.ms` (stopping early if its signal aborts),
 * then applies its effect through fencedEffect: a row in `chaos_effects`, which has no unique
 * key, so a second application would show as a second row. It reports on stdout:
 * `START <job> <fence> <epoch ms>`, `DONE <job> <fence>`, `READY`, `ZOMBIE`, `STOPPED`.
 */
import { fencedEffect, Worker, type TaskContext } from '@kairos/worker-sdk';
import pg from 'pg';
import { say, serveWorker, workerOptions, type WorkerServices } from '../support/worker-serve.js';

interface ChaosWorkerEnv extends WorkerServices {
  readonly service: string;
  readonly types: readonly string[];
  readonly groupId: string;
}

const env = JSON.parse(process.env.CHAOS_WORKER_ENV ?? '{}') as ChaosWorkerEnv;
const pool = new pg.Pool({ connectionString: env.pgUrl, options: `-c search_path=${env.schema}`, max: 4 });
// A broken connection (PostgreSQL restarted) must not end the process: the next query reconnects.
pool.on('error', () => undefined);

const worker = new Worker({ ...workerOptions(env), service: env.service, groupId: env.groupId });

const work = async (payload: { ms: number }, ctx: TaskContext) => {
  say(`START ${ctx.jobId} ${ctx.fence} ${Date.now()}`);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, payload.ms);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (ctx.signal.aborted) {
    const reason: unknown = ctx.signal.reason;
    throw reason instanceof Error ? reason : new Error(String(reason));
  }
  await fencedEffect(pool, ctx, async (tx) => {
    await tx.query('INSERT INTO chaos_effects (job_id, fence, worker) VALUES ($1, $2, $3)', [
      ctx.jobId,
      ctx.fence,
      process.pid,
    ]);
  });
  say(`DONE ${ctx.jobId} ${ctx.fence}`);
};
for (const type of env.types) worker.handle(type, work);

await serveWorker(worker, pool);
