import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { partitionKeys } from '@kairos/redis';
import { fencedEffectsTableSql } from '@kairos/worker-sdk';
import { expect, test } from 'vitest';
import type { Namespace } from '../support/namespace.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';
import { sumOf } from '../support/prom-text.js';
import { workerProcessEnv } from '../support/worker-env.js';

const LEASE_MS = 2000;
const HEARTBEAT_MS = 500;
const SESSION_MS = 6000; // the broker's minimum: a dead worker's partitions move on after this

interface WorkerProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

/** A worker in its own process (test/support/worker-process.ts) on the test's namespace. */
function startWorkerProcess(ns: Namespace): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      '--conditions=kairos-source',
      '--import',
      'tsx',
      resolve(import.meta.dirname, '../support/worker-process.ts'),
    ],
    {
      env: {
        ...process.env,
        WORKER_ENV: workerProcessEnv(ns, {
          leaseMs: LEASE_MS,
          heartbeatMs: HEARTBEAT_MS,
          sessionTimeoutMs: SESSION_MS,
        }),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  ns.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    }
  });
  return {
    child,
    lines,
    exited,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((res, rej) => {
        const check = () => {
          const hit = lines.find((l) => pattern.test(l));
          if (hit) {
            waiters.delete(check);
            clearTimeout(timer);
            res(hit);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          rej(new Error(`worker process never printed ${String(pattern)}; got:\n${lines.join('\n')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}

async function attempts(p: Pipeline, jobId: string) {
  const r = await p.pool.query<{
    fence: number;
    outcome: string | null;
    error_class: string | null;
    suppressed: boolean;
  }>('SELECT fence::int, outcome, error_class, suppressed FROM attempts WHERE job_id = $1 ORDER BY fence', [
    jobId,
  ]);
  return r.rows;
}

test('a worker SIGKILLed mid-handler: its lease expires, the job is dispatched again with fence 2 and succeeds on another worker', async () => {
  const ns = await useNamespace('lease-kill');
  const reaped: { jobId: string; fence: number }[] = [];
  const p = await startPipeline(ns, {
    delayTier: { reapIntervalMs: 250, onReaped: (jobId, fence) => reaped.push({ jobId, fence }) },
  });
  const doomed = startWorkerProcess(ns);
  await doomed.waitFor(/^READY$/);
  const [created] = await p.commands.createJobs([
    { tenant: 'acme', type: 'lease.work', resource_class: 'default', payload: { ms: 60_000, retryMs: 200 } },
  ]);
  const id = created!.job.id;
  await doomed.waitFor(new RegExp(`^START ${id} 1$`));
  doomed.child.kill('SIGKILL');
  await doomed.exited;

  // Another worker of the same group takes over once the session of the dead one expires.
  const rescuer = startWorkerProcess(ns);
  await rescuer.waitFor(/^READY$/);
  await eventually(
    'the lease to be reaped',
    () => reaped.some((r) => r.jobId === id && r.fence === 1),
    30_000,
  );
  await rescuer.waitFor(new RegExp(`^DONE ${id} 2$`), 60_000);
  await eventually('the job to succeed', async () => (await p.commands.getJob(id)).state === 'SUCCEEDED');
  const job = await p.commands.getJob(id);
  expect(job.fence).toBe(2);
  expect(job.attempt).toBe(2);
  // The lost attempt was reported failed (ambiguous: its effect may have happened) and retried.
  expect((await attempts(p, id)).find((a) => a.fence === 1)).toMatchObject({
    outcome: 'FAILED',
    error_class: 'LeaseExpired',
  });
  // The fence-1 task, redelivered to the rescuer, was discarded (its attempt was reaped).
  expect(rescuer.lines.filter((l) => l.startsWith(`START ${id} 1`))).toEqual([]);
});

test('a worker SIGKILLed mid-handler after Redis lost its lease: the reaper cannot see it, the watchdog fails it and it runs again', async () => {
  const ns = await useNamespace('lease-lost');
  const p = await startPipeline(ns, {
    delayTier: { reapIntervalMs: 250 },
    watchdog: { intervalMs: 250, runningTimeoutMs: 1000 },
  });
  const doomed = startWorkerProcess(ns);
  await doomed.waitFor(/^READY$/);
  const [lost, kept] = await p.commands.createJobs([
    { tenant: 'acme', type: 'lease.work', resource_class: 'default', payload: { ms: 60_000, retryMs: 200 } },
    { tenant: 'acme', type: 'lease.work', resource_class: 'default', payload: { ms: 6000 } },
  ]);
  const id = lost!.job.id;
  await doomed.waitFor(new RegExp(`^START ${id} 1$`));
  await doomed.waitFor(new RegExp(`^START ${kept!.job.id} 1$`));
  // Its start is recorded (a task's START comes before its report reaches the tracker).
  await eventually('the job to be RUNNING', async () => (await p.commands.getJob(id)).state === 'RUNNING');
  // Redis loses the attempt's lease and record, then its worker dies: nothing will ever expire.
  const redis = ns.redis();
  const k = partitionKeys('', lost!.job.shard);
  doomed.child.kill('SIGSTOP');
  await redis.zrem(k.leases, id);
  await redis.del(k.attempt(id));
  await redis.quit();
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  const killedAt = Date.now();
  // No worker holds it now (a redelivered task would be claimed afresh by a new worker): only the
  // watchdog can tell that attempt 1 is gone.
  await eventually(
    'the watchdog to fail the lost attempt',
    async () =>
      sumOf(await p.tracker.metrics.text(), 'kairos_watchdog_repairs_total', {
        kind: 'running_without_lease',
      }) === 1,
    30_000,
  );
  console.log(
    `[watchdog] lease lost + worker killed → attempt failed by the watchdog ${Date.now() - killedAt} ms later`,
  );

  const rescuer = startWorkerProcess(ns);
  await rescuer.waitFor(/^READY$/);
  await rescuer.waitFor(new RegExp(`^DONE ${id} 2$`), 60_000);
  await eventually('the job to succeed', async () => (await p.commands.getJob(id)).state === 'SUCCEEDED');
  expect((await attempts(p, id)).find((a) => a.fence === 1)).toMatchObject({
    outcome: 'FAILED',
    error_class: 'LeaseExpired',
  });
  // The other job kept its lease: the reaper took it as usual, the watchdog did not.
  await eventually(
    'the other job to succeed',
    async () => (await p.commands.getJob(kept!.job.id)).state === 'SUCCEEDED',
    60_000,
  );
  expect(
    sumOf(await p.tracker.metrics.text(), 'kairos_watchdog_findings_total', {
      kind: 'running_without_lease',
    }),
  ).toBe(1);
});

test('cancel: a queued task is discarded before it runs; a running handler is aborted within a heartbeat', async () => {
  const ns = await useNamespace('lease-cancel');
  const p = await startPipeline(ns);
  const started: string[] = [];
  const aborted = new Map<string, { reason: unknown; afterMs: number }>();
  let cancelledAt = 0;
  const worker = p.worker({ concurrency: 1, leaseMs: 3000, heartbeatMs: 300 });
  worker.handle('cancel.work', async (_payload, ctx) => {
    started.push(ctx.jobId);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        aborted.set(ctx.jobId, { reason: ctx.signal.reason, afterMs: Date.now() - cancelledAt });
        resolve();
      });
    });
  });
  await worker.start();
  // One slot: `running` occupies it, `queued` waits in the worker behind it.
  const [running, queued] = await p.commands.createJobs([
    { tenant: 'acme', type: 'cancel.work', resource_class: 'default' },
    { tenant: 'acme', type: 'cancel.work', resource_class: 'default', delay_ms: 300 },
  ]);
  await eventually('the first job to start', () => started.includes(running!.job.id));
  await eventually(
    'the second job to be dispatched',
    async () => (await p.commands.getJob(queued!.job.id)).state === 'QUEUED',
  );
  expect((await p.commands.cancelJob(queued!.job.id)).state).toBe('CANCELLED');
  cancelledAt = Date.now();
  expect((await p.commands.cancelJob(running!.job.id)).state).toBe('CANCELLED');
  await eventually('the running handler to be aborted', () => aborted.has(running!.job.id), 10_000);
  const a = aborted.get(running!.job.id)!;
  expect((a.reason as Error).name).toBe('JobCancelled');
  // Within one heartbeat of the cancel reaching the delay tier (CDC adds its own delay).
  expect(a.afterMs).toBeLessThan(5000);
  // The slot is free again: the queued task's turn comes, and its claim finds it cancelled.
  const [after] = await p.commands.createJobs([
    { tenant: 'acme', type: 'cancel.work', resource_class: 'default', delay_ms: 500 },
  ]);
  await eventually('a later job to start', () => started.includes(after!.job.id), 20_000);
  expect(started).not.toContain(queued!.job.id);
  expect((await p.commands.getJob(running!.job.id)).state).toBe('CANCELLED');
  expect((await p.commands.getJob(queued!.job.id)).state).toBe('CANCELLED');
  await p.commands.cancelJob(after!.job.id);
});

test('a worker SIGSTOPped past its lease: the job reruns elsewhere with a higher fence; the paused one wakes up a zombie, its result is refused and counted, and the fenced effect happened once', async () => {
  const ns = await useNamespace('lease-stop');
  const p = await startPipeline(ns, { delayTier: { reapIntervalMs: 250 } });
  await p.pool.query('CREATE TABLE effects (job_id text NOT NULL, fence bigint NOT NULL)');
  await p.pool.query(fencedEffectsTableSql());
  const paused = startWorkerProcess(ns);
  await paused.waitFor(/^READY$/);
  const [created] = await p.commands.createJobs([
    { tenant: 'acme', type: 'lease.work', resource_class: 'default', payload: { ms: 1500, effect: true } },
  ]);
  const id = created!.job.id;
  await paused.waitFor(new RegExp(`^START ${id} 1$`));
  paused.child.kill('SIGSTOP');

  const other = startWorkerProcess(ns);
  await other.waitFor(/^READY$/);
  await other.waitFor(new RegExp(`^DONE ${id} 2$`), 60_000);
  await eventually(
    'the job to succeed at fence 2',
    async () => (await p.commands.getJob(id)).state === 'SUCCEEDED',
  );
  expect((await p.commands.getJob(id)).fence).toBe(2);

  paused.child.kill('SIGCONT');
  await paused.waitFor(/^ZOMBIE$/, 20_000);
  expect(await paused.exited).toBe(0); // it shut itself down gracefully
  // Its late result (fence 1) changed nothing: attempt 1 had finished (the reaper's LeaseExpired),
  // so the result was refused, audited and counted as a suppressed zombie write.
  await eventually(
    'the zombie result to be refused',
    async () =>
      (
        await p.pool.query(
          `SELECT 1 FROM refused_reports WHERE job_id = $1 AND fence = 1 AND kind = 'result'
             AND reason = 'attempt_finished'`,
          [id],
        )
      ).rowCount! >= 1,
    20_000,
  );
  expect((await attempts(p, id)).find((a) => a.fence === 1)).toMatchObject({
    outcome: 'FAILED',
    error_class: 'LeaseExpired',
    suppressed: false,
  });
  const counted = await p.tracker.metrics.zombieWritesSuppressed.get();
  expect(counted.values[0]?.value).toBeGreaterThanOrEqual(1);
  expect(
    sumOf(await p.tracker.metrics.text(), 'kairos_tracker_refused_reports_total', {
      kind: 'result',
      reason: 'attempt_finished',
    }),
  ).toBeGreaterThanOrEqual(1);
  const job = await p.commands.getJob(id);
  expect(job.state).toBe('SUCCEEDED');
  expect(job.fence).toBe(2);
  const effects = await p.pool.query<{ job_id: string; fence: number }>(
    'SELECT job_id, fence::int FROM effects',
  );
  expect(effects.rows).toEqual([{ job_id: id, fence: 2 }]);
  const zombieEffect = paused.lines.find((l) => l.startsWith(`EFFECT ${id} 1`));
  // The paused attempt either aborted before its effect or was refused by the fence.
  expect(zombieEffect === undefined || zombieEffect.endsWith('zombie')).toBe(true);
});

test('SIGTERM: the worker stops taking work, lets its running handler finish, commits and exits', async () => {
  const ns = await useNamespace('lease-term');
  const p = await startPipeline(ns);
  const w = startWorkerProcess(ns);
  await w.waitFor(/^READY$/);
  const [created] = await p.commands.createJobs([
    { tenant: 'acme', type: 'lease.work', resource_class: 'default', payload: { ms: 2000 } },
  ]);
  const id = created!.job.id;
  await w.waitFor(new RegExp(`^START ${id} 1$`));
  w.child.kill('SIGTERM');
  expect(await w.exited).toBe(0);
  const order = w.lines.filter((l) => l.startsWith(`DONE ${id}`) || l === 'STOPPED');
  expect(order).toEqual([`DONE ${id} 1`, 'STOPPED']);
  await eventually('the job to succeed', async () => (await p.commands.getJob(id)).state === 'SUCCEEDED');
  // Its lease was released as done: nothing left for the reaper.
  expect(await p.delayTier.leases.running(created!.job.shard)).toBe(0);
});
