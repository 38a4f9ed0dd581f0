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

interface WorkerEnv {
  readonly kafkaBrokers: string;
  readonly registryUrl: string;
  readonly redisUrl: string;
  readonly pgUrl: string;
  readonly prefix: string;
  readonly schema: string;
  readonly resourceClasses: string[];
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly sessionTimeoutMs: number;
}

const env = JSON.parse(process.env.WORKER_ENV ?? '{}') as WorkerEnv;
const say = (line: string) => process.stdout.write(`${line}\n`);
const pool = new pg.Pool({ connectionString: env.pgUrl, options: `-c search_path=${env.schema}`, max: 2 });

const worker = new Worker({
  brokers: env.kafkaBrokers.split(','),
  registryUrl: env.registryUrl,
  resourceClasses: env.resourceClasses,
  topicPrefix: env.prefix,
  redisUrl: env.redisUrl,
  redisKeyPrefix: env.prefix,
  leaseMs: env.leaseMs,
  heartbeatMs: env.heartbeatMs,
  sessionTimeoutMs: env.sessionTimeoutMs,
  shutdownTimeoutMs: 5000,
  onZombie: 'shutdown',
  logger: {
    info: () => undefined,
    warn: () => undefined,
    error: (obj, msg) => {
      if (msg === 'ZombieWriteSuppressed') say('ZOMBIE');
    },
  },
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

await worker.start();
say('READY');
const stop = () =>
  void worker
    .stop()
    .then(() => pool.end())
    .then(() => {
      say('STOPPED');
      process.exit(0);
    });
process.once('SIGTERM', stop);
// A zombie worker stops itself: exit once it has.
const poll = setInterval(() => {
  if (worker.zombieAttempts > 0) {
    clearInterval(poll);
    stop();
  }
}, 100);
