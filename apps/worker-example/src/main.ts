/**
 * A worker service as a backend team would write it: it depends on @kairos/worker-sdk alone,
 * reads its own configuration, registers a handler per job type and stops cleanly on SIGTERM.
 */
import { parseReservedSlots, Worker, type WorkerLogger } from '@kairos/worker-sdk';

const env = process.env;
const log: WorkerLogger = {
  info: (obj, msg) =>
    console.log(JSON.stringify({ level: 'info', component: 'worker-example', msg, ...obj })),
  warn: (obj, msg) =>
    console.log(JSON.stringify({ level: 'warn', component: 'worker-example', msg, ...obj })),
  error: (obj, msg) =>
    console.log(JSON.stringify({ level: 'error', component: 'worker-example', msg, ...obj })),
};

/** The worker of this environment; bad configuration ends the process with what is wrong. */
function configuredWorker(): Worker {
  try {
    return new Worker({
      brokers: (env.KAIROS_KAFKA_BROKERS ?? '127.0.0.1:59092').split(','),
      registryUrl: env.KAIROS_REGISTRY_URL ?? 'http://127.0.0.1:58081/apis/ccompat/v7',
      resourceClasses: (env.KAIROS_RESOURCE_CLASSES ?? 'critical,default,cpu,io').split(','),
      topicPrefix: env.KAIROS_TOPIC_PREFIX ?? '',
      redisUrl: env.KAIROS_REDIS_URL ?? 'redis://127.0.0.1:56379',
      redisKeyPrefix: env.KAIROS_REDIS_KEY_PREFIX ?? '',
      concurrency: Number(env.WORKER_CONCURRENCY ?? 20),
      // e.g. critical:12: slots only critical tasks may use (the rest are shared by every class).
      reservedSlots: parseReservedSlots(
        env.KAIROS_WORKER_RESERVED_SLOTS ?? '',
        'KAIROS_WORKER_RESERVED_SLOTS',
      ),
      ...(env.KAIROS_KAFKA_SESSION_TIMEOUT_MS
        ? { sessionTimeoutMs: Number(env.KAIROS_KAFKA_SESSION_TIMEOUT_MS) }
        : {}),
      logger: log,
    });
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
}

const worker = configuredWorker();

interface Greeting {
  name: string;
}

worker.handle<Greeting>('demo.hello', (payload, ctx) => {
  const late = Date.now() - ctx.dueAt.getTime();
  // ctx.log: the worker's logger, each line with the job's id, fence and traceparent.
  ctx.log.info({ attempt: ctx.attempt, lateMs: late }, `hello, ${payload.name}`);
});

worker.handle<{ to: string }>('email.send', async (payload, ctx) => {
  // A real handler passes ctx.idempotencyKey to the provider so a retry never sends twice.
  await new Promise((r) => setTimeout(r, 50));
  ctx.log.info({ idempotencyKey: ctx.idempotencyKey }, `email sent to ${payload.to}`);
});

worker.handle<{ rows: number }>('report.build', async (payload, ctx) => {
  await new Promise((r) => setTimeout(r, Math.min(payload.rows, 2000)));
  ctx.log.info({ rows: payload.rows }, 'report built');
});

await worker.start();
const stop = () => {
  worker.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
