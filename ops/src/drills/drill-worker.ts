/**
 * The worker service of the drills, run as its own OS process by ProcessDeployment.startWorker
 * (so a drill can SIGKILL or SIGSTOP it). It serves every class of its namespace (the KAIROS_*
 * variables the deployment sets) with two handlers:
 * - `drill.effect`: wait `payload.ms` (default 0), then apply the job's side effect once through
 *   fencedEffect: a row (job, fence, worker) in `drill_effects`, so a drill counts effects per job.
 *   Deliberately deaf to its abort signal: a paused worker wakes up and tries its late write,
 *   which is the zombie the fence must stop.
 * - `drill.call`: POST to the downstream at DRILL_DOWNSTREAM_URL (the retry-storm drill's); a
 *   503/504 is a TransientError (a ThrottledError when it says Retry-After), so the SDK's breaker
 *   and the job's backoff see a failing dependency; a 2xx applies the effect as above.
 * stdout: `READY`, `START <job> <fence>`, `EFFECT <job> <fence> applied|zombie`,
 * `BREAKER <job type> closed|open|ramping` (each change of a breaker), `EXIT`.
 * Settings: DRILL_LEASE_MS (default: the SDK's), KAIROS_KAFKA_SESSION_TIMEOUT_MS (default 6,000),
 * DRILL_CONCURRENCY (default 50), DRILL_ON_ZOMBIE (default `continue`: a drill's only worker must
 * not leave over one lease lost on a busy machine; the zombie-worker drill sets `shutdown`),
 * DRILL_BREAKER_OPEN_MS, DRILL_BREAKER_RAMP_MS and DRILL_BREAKER_INITIAL_SHARE (default: the SDK's),
 * DRILL_RESERVED_SLOTS (default none: `critical:30` keeps 30 slots for critical, as midnight-herd does).
 */
import {
  fencedEffect,
  parseReservedSlots,
  parseRetryAfter,
  PermanentError,
  ThrottledError,
  TransientError,
  Worker,
  ZombieWriteSuppressed,
  type TaskContext,
} from '@kairos/worker-sdk';
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
const breakers = new Map<string, string>();
const breakerIs = (jobType: string, state: string) => {
  if ((breakers.get(jobType) ?? 'closed') !== state) say(`BREAKER ${jobType} ${state}`);
  breakers.set(jobType, state);
};
/** The SDK's breaker changes as it decides them (its only log lines this worker prints). */
const breakerLine = (obj: object) => {
  const { jobType, to } = obj as { jobType?: unknown; to?: unknown };
  if (typeof jobType === 'string' && typeof to === 'string') breakerIs(jobType, to);
};
const worker = new Worker({
  brokers: (env.KAIROS_KAFKA_BROKERS ?? '').split(','),
  registryUrl: env.KAIROS_REGISTRY_URL ?? '',
  resourceClasses: (env.KAIROS_RESOURCE_CLASSES ?? 'default').split(','),
  topicPrefix: env.KAIROS_TOPIC_PREFIX ?? '',
  redisUrl: env.KAIROS_REDIS_URL ?? '',
  redisKeyPrefix: env.KAIROS_REDIS_KEY_PREFIX ?? '',
  concurrency: Number(env.DRILL_CONCURRENCY ?? 50),
  reservedSlots: parseReservedSlots(env.DRILL_RESERVED_SLOTS ?? '', 'DRILL_RESERVED_SLOTS'),
  ...(env.DRILL_LEASE_MS ? { leaseMs: Number(env.DRILL_LEASE_MS) } : {}),
  sessionTimeoutMs: Number(env.KAIROS_KAFKA_SESSION_TIMEOUT_MS ?? 6000),
  shutdownTimeoutMs: 5000,
  onZombie: env.DRILL_ON_ZOMBIE === 'shutdown' ? 'shutdown' : 'continue',
  breaker: {
    ...(env.DRILL_BREAKER_OPEN_MS ? { openMs: Number(env.DRILL_BREAKER_OPEN_MS) } : {}),
    ...(env.DRILL_BREAKER_RAMP_MS ? { rampMs: Number(env.DRILL_BREAKER_RAMP_MS) } : {}),
    ...(env.DRILL_BREAKER_INITIAL_SHARE ? { initialShare: Number(env.DRILL_BREAKER_INITIAL_SHARE) } : {}),
  },
  logger: { info: quiet, warn: breakerLine, error: quiet },
});

/** The job's side effect, once per job through its fence (a zombie's late write is refused). */
async function effect(ctx: TaskContext): Promise<void> {
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
}

worker.handle<{ ms?: number }>('drill.effect', async (payload, ctx) => {
  say(`START ${ctx.jobId} ${ctx.fence}`);
  if (payload.ms) await new Promise((r) => setTimeout(r, payload.ms));
  await effect(ctx);
});

worker.handle('drill.call', async (_payload, ctx) => {
  const res = await fetch(env.DRILL_DOWNSTREAM_URL ?? '', {
    method: 'POST',
    headers: {
      'idempotency-key': ctx.idempotencyKey,
      'x-job-id': ctx.jobId,
      'x-attempt': String(ctx.attempt),
    },
    signal: ctx.signal,
  });
  await res.arrayBuffer();
  if (res.status === 503 || res.status === 504) {
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
    const why = `downstream answered ${res.status}`;
    throw retryAfterMs === undefined ? new TransientError(why) : new ThrottledError(why, { retryAfterMs });
  }
  if (!res.ok) throw new PermanentError(`downstream answered ${res.status}`);
  await effect(ctx);
});

await worker.start();
say('READY');
// The SDK tells a change when a task asks; a breaker's timed ones (open → ramping → closed) may
// come while none does, so they are looked at too.
setInterval(() => breakerIs('drill.call', worker.breakerState('drill.call')), 100).unref();
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
