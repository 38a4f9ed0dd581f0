/**
 * A Kairos worker in its own process, for tests that SIGKILL or SIGSTOP it. Configured by
 * WORKER_ENV (JSON): services, prefix, schema, lease and session timings. Its handler
 * `lease.work` sleeps `payload.ms` (`payload.retryMs` from fence 2 on; stopping early if its
 * signal aborts), then, if
 * `payload.effect`, applies a fencedEffect that inserts (job, fence) into `effects` in the
 * test's schema. It reports on stdout: `START <job> <fence>`, `EFFECT <job> <fence> <applied>`,
 * `DONE <job> <fence>`, `ABORT <job> <fence> <reason>`, `ZOMBIE`, `STOPPED`.
 */
import { fencedEffect, Worker, ZombieWriteSuppressed } from '@kairos/worker-sdk';
import pg from 'pg';
import { say, serveWorker, workerOptions, type WorkerServices } from './worker-serve.js';

interface WorkerEnv extends WorkerServices {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly sessionTimeoutMs: number;
}

const env = JSON.parse(process.env.WORKER_ENV ?? '{}') as WorkerEnv;
const pool = new pg.Pool({ connectionString: env.pgUrl, options: `-c search_path=${env.schema}`, max: 2 });

const worker = new Worker({
  ...workerOptions(env),
  leaseMs: env.leaseMs,
  heartbeatMs: env.heartbeatMs,
  sessionTimeoutMs: env.sessionTimeoutMs,
});

worker.handle<{ ms: number; retryMs?: number; effect?: boolean }>('lease.work', async (payload, ctx) => {
  say(`START ${ctx.jobId} ${ctx.fence}`);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ctx.fence > 1 ? (payload.retryMs ?? payload.ms) : payload.ms);
    ctx.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (ctx.signal.aborted) {
    const reason: unknown = ctx.signal.reason;
    say(`ABORT ${ctx.jobId} ${ctx.fence} ${reason instanceof Error ? reason.name : String(reason)}`);
    throw reason instanceof Error ? reason : new Error(String(reason));
  }
  if (payload.effect) {
    try {
      const r = await fencedEffect(pool, ctx, async (tx) => {
        await tx.query('INSERT INTO effects (job_id, fence) VALUES ($1, $2)', [ctx.jobId, ctx.fence]);
      });
      say(`EFFECT ${ctx.jobId} ${ctx.fence} ${r.applied}`);
    } catch (err) {
      if (err instanceof ZombieWriteSuppressed) say(`EFFECT ${ctx.jobId} ${ctx.fence} zombie`);
      throw err;
    }
  }
  say(`DONE ${ctx.jobId} ${ctx.fence}`);
});

await serveWorker(worker, pool);
