/**
 * The worker service of the drills, run as its own OS process by ProcessDeployment.startWorker
 * (so a drill can SIGKILL or SIGSTOP it). It serves every class of its namespace (the KAIROS_*
 * variables the deployment sets) with one handler, `drill.effect`: wait `payload.ms` (default 0),
 * then apply the job's side effect once through fencedEffect: a row (job, fence, worker) in
 * `drill_effects`, so a drill counts effects per job. Deliberately deaf to its abort signal: a
 * paused worker wakes up and tries its late write, which is the zombie the fence must stop.
 * stdout: `READY`, `START <job> <fence>`, `EFFECT <job> <fence> applied|zombie`, `EXIT`.
 * Settings: DRILL_LEASE_MS (default: the SDK's), KAIROS_KAFKA_SESSION_TIMEOUT_MS (default 6,000),
 * DRILL_CONCURRENCY (default 50), DRILL_ON_ZOMBIE (default `continue`: a drill's only worker must
 * not leave over one lease lost on a busy machine; the zombie-worker drill sets `shutdown`).
 */
import { fencedEffect, Worker, ZombieWriteSuppressed } from '@kairos/worker-sdk';
import pg from 'pg';

const env = process.env;
const say = (line: string) => process.stdout.write(`${line}\n`);
const name = env.KAIROS_INSTANCE_ID ?? 'worker';
const pool = new pg.Pool({
  connectionString: env.KAIROS_PG_URL,
  options: `-c search_path=${env.KAIROS_DB_SCHEMA ?? 'public'}`,
  max: 4,
});
const quiet = () => undefined;
const worker = new Worker({
  brokers: (env.KAIROS_KAFKA_BROKERS ?? '').split(','),
  registryUrl: env.KAIROS_REGISTRY_URL ?? '',
  resourceClasses: (env.KAIROS_RESOURCE_CLASSES ?? 'default').split(','),
  topicPrefix: env.KAIROS_TOPIC_PREFIX ?? '',
  redisUrl: env.KAIROS_REDIS_URL ?? '',
  redisKeyPrefix: env.KAIROS_REDIS_KEY_PREFIX ?? '',
  concurrency: Number(env.DRILL_CONCURRENCY ?? 50),
  ...(env.DRILL_LEASE_MS ? { leaseMs: Number(env.DRILL_LEASE_MS) } : {}),
  sessionTimeoutMs: Number(env.KAIROS_KAFKA_SESSION_TIMEOUT_MS ?? 6000),
  shutdownTimeoutMs: 5000,
  onZombie: env.DRILL_ON_ZOMBIE === 'shutdown' ? 'shutdown' : 'continue',
  logger: { info: quiet, warn: quiet, error: quiet },
});

worker.handle<{ ms?: number }>('drill.effect', async (payload, ctx) => {
  say(`START ${ctx.jobId} ${ctx.fence}`);
  if (payload.ms) await new Promise((r) => setTimeout(r, payload.ms));
  try {
    await fencedEffect(pool, ctx, async (tx) => {
      await tx.query('INSERT INTO drill_effects (job_id, fence, worker) VALUES ($1, $2, $3)', [
        ctx.jobId,
        ctx.fence,
        name,
      ]);
    });
    say(`EFFECT ${ctx.jobId} ${ctx.fence} applied`);
  } catch (err) {
    if (err instanceof ZombieWriteSuppressed) say(`EFFECT ${ctx.jobId} ${ctx.fence} zombie`);
    throw err;
  }
});

await worker.start();
say('READY');
let exiting = false;
const exit = () => {
  if (exiting) return;
  exiting = true;
  void worker
    .stop()
    .then(() => pool.end())
    .finally(() => {
      say('EXIT');
      process.exit(0);
    });
};
process.once('SIGTERM', exit);
// A zombie told to shut down stops itself; the process leaves with it.
if (env.DRILL_ON_ZOMBIE === 'shutdown') {
  setInterval(() => {
    if (worker.zombieAttempts > 0) exit();
  }, 100).unref();
}
