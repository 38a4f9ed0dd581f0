import { topicNames } from '@kairos/kafka';
import { expect, test } from 'vitest';
import {
  createJobsOverHttp,
  startDeployment,
  startWorkerProcess,
  waitAllSucceeded,
  type JobView,
} from '../support/deployment.js';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { readAllDecoded } from '../support/topics.js';

interface TaskMessage {
  readonly job: string;
  readonly partition: number;
  readonly offset: bigint;
}

/** Every message of the `default` task topic (a job dispatched twice has two). */
async function taskMessages(ns: Namespace): Promise<TaskMessage[]> {
  const all = await readAllDecoded(ns, topicNames(ns.prefix).tasks('default'));
  return all.map((m) => ({ job: m.key ?? '', partition: m.partition, offset: BigInt(m.offset) }));
}

test('a long task does not hold back a later task of its partition: a free slot runs it meanwhile', async () => {
  const ns = await useNamespace('worker-hol');
  const p = await startPipeline(ns);
  const started = new Map<string, number>();
  const finished = new Map<string, number>();
  const worker = p.worker({ concurrency: 2, shutdownTimeoutMs: 500 });
  worker.handle<{ ms: number }>('hol.work', async (payload, ctx) => {
    started.set(ctx.jobId, Date.now());
    // Stops early when the worker stops at the end of the test.
    await new Promise((r) => {
      setTimeout(r, payload.ms);
      ctx.signal.addEventListener('abort', r);
    });
    if (!ctx.signal.aborted) finished.set(ctx.jobId, Date.now());
  });
  await worker.start();
  const job = (ms: number) => ({
    tenant: 'acme',
    type: 'hol.work',
    resource_class: 'default',
    payload: { ms },
  });
  const [long] = await p.commands.createJobs([job(20_000)]);
  const longId = long!.job.id;
  await eventually('the long task to start', () => started.has(longId));

  // Short tasks until some land in the long one's partition (behind it, dispatched after it).
  const behind: string[] = [];
  for (let round = 0; round < 5 && behind.length === 0; round++) {
    const shorts = (await p.commands.createJobs(Array.from({ length: 8 }, () => job(50)))).map(
      (r) => r.job.id,
    );
    await eventually('the short tasks to finish', () => shorts.every((id) => finished.has(id)), 30_000);
    const messages = await taskMessages(ns);
    const own = messages.find((m) => m.job === longId)!;
    behind.push(
      ...shorts.filter((id) =>
        messages.some((m) => m.job === id && m.partition === own.partition && m.offset > own.offset),
      ),
    );
  }
  expect(behind.length).toBeGreaterThan(0);
  // They ran while the long one still runs: nothing waited for it.
  expect(finished.has(longId)).toBe(false);
  for (const id of behind) expect(started.get(id)!).toBeGreaterThan(started.get(longId)!);
  expect(Date.now() - started.get(longId)!).toBeLessThan(20_000);
});

/** Committed positions of the workers' group on the `default` task topic, by partition (-1: none). */
async function committed(ns: Namespace): Promise<Map<number, bigint>> {
  const admin = ns.admin();
  await admin.connect();
  try {
    const topic = topicNames(ns.prefix).tasks('default');
    const [offsets] = await admin.fetchOffsets({
      groupId: `${ns.prefix}kairos-workers.default`,
      topics: [topic],
    });
    return new Map((offsets?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  } finally {
    await admin.disconnect();
  }
}

test('offsets are committed only below the watermark: a worker SIGKILLed with long tasks running loses nothing finished and skips nothing unfinished', async () => {
  const ns = await useNamespace('worker-watermark');
  const starts: { app: string; job: string; fence: number }[] = [];
  const d = await startDeployment(ns, {
    onLine: (app, line) => {
      const [kind, job, fence] = line.split(' ');
      if (kind === 'START' && job) starts.push({ app, job, fence: Number(fence) });
    },
  });
  const victim = await startWorkerProcess(d, ns);
  const task = (ms: number) => ({
    tenant: 'acme',
    type: 'lease.work',
    resource_class: 'default',
    payload: { ms, retryMs: 50 },
  });
  const ids = (jobs: readonly JobView[]) => jobs.map((j) => j.id);
  // Finished tasks, then long ones (they hold the watermark), then finished ones behind them.
  const before = ids(
    await createJobsOverHttp(
      d,
      Array.from({ length: 8 }, () => task(100)),
    ),
  );
  await waitAllSucceeded(d, before);
  const long = ids(
    await createJobsOverHttp(
      d,
      Array.from({ length: 8 }, () => task(120_000)),
    ),
  );
  await eventually('the long tasks to run', () => long.every((id) => starts.some((s) => s.job === id)));
  const after = ids(
    await createJobsOverHttp(
      d,
      Array.from({ length: 8 }, () => task(100)),
    ),
  );
  await waitAllSucceeded(d, after);

  // Each partition's watermark: its first long task (still running), else past its last task.
  const watermark = new Map<number, bigint>();
  const messages = await taskMessages(ns);
  for (const partition of new Set(messages.map((m) => m.partition))) {
    const here = messages.filter((m) => m.partition === partition);
    const held = here.filter((m) => long.includes(m.job)).map((m) => m.offset);
    const last = here.reduce((max, m) => (m.offset > max ? m.offset : max), -1n);
    watermark.set(partition, held.length > 0 ? held.reduce((min, o) => (o < min ? o : min)) : last + 1n);
  }
  await eventually('every partition committed up to its watermark', async () => {
    const c = await committed(ns);
    // Never beyond it: above it lies a task that has not finished.
    for (const [partition, offset] of c) expect(offset).toBeLessThanOrEqual(watermark.get(partition) ?? -1n);
    // Up to it: what finished below it is not left for the next owner (nothing to commit when
    // the partition starts with a long task: the topic is new, so its first offset is 0).
    return [...watermark].every(
      ([partition, w]) => c.get(partition) === w || (w === 0n && c.get(partition) === -1n),
    );
  });
  await d.kill(victim, 'SIGKILL');

  const rescuer = await startWorkerProcess(d, ns);
  await waitAllSucceeded(d, [...before, ...long, ...after], 90_000);
  const on = (app: string) => starts.filter((s) => s.app === app);
  // What had finished, committed or not, did not run again: the rescuer's claims found it done.
  expect(on(rescuer.name).filter((s) => !long.includes(s.job))).toEqual([]);
  // What had not finished ran again there (its dead attempt reaped, then retried with fence 2).
  expect(
    on(rescuer.name)
      .map((s) => `${s.job} ${s.fence}`)
      .sort(),
  ).toEqual(long.map((id) => `${id} 2`).sort());
});

test('a worker SIGSTOPped past its leases: on waking, its batched heartbeat is refused for every running attempt, each handler is aborted as a zombie, and it stops', async () => {
  const ns = await useNamespace('worker-zombie');
  const lines: { app: string; line: string }[] = [];
  const d = await startDeployment(ns, { onLine: (app, line) => lines.push({ app, line }) });
  const paused = await startWorkerProcess(d, ns);
  const jobs = (
    await createJobsOverHttp(
      d,
      // Handlers far longer than the test: only a refused renewal can stop them early.
      Array.from({ length: 3 }, () => ({
        tenant: 'acme',
        type: 'lease.work',
        resource_class: 'default',
        payload: { ms: 600_000, retryMs: 50 },
      })),
    )
  ).map((j) => j.id);
  const saw = (app: string, line: string) => lines.some((l) => l.app === app && l.line === line);
  await eventually('every job running', () => jobs.every((id) => saw(paused.name, `START ${id} 1`)));
  await d.kill(paused, 'SIGSTOP');

  // Past its leases: reaped, retried with fence 2 and done by another worker.
  const other = await startWorkerProcess(d, ns);
  await waitAllSucceeded(d, jobs, 90_000);
  expect(jobs.every((id) => saw(other.name, `START ${id} 2`))).toBe(true);

  const exited = new Promise<number | null>((r) => paused.child.once('exit', (code) => r(code)));
  const wokeAt = Date.now();
  await d.kill(paused, 'SIGCONT');
  await eventually('the paused worker to find out it is a zombie for every attempt', () =>
    jobs.every((id) => saw(paused.name, `ABORT ${id} 1 ZombieWriteSuppressed`)),
  );
  // One heartbeat tick after waking (a third of the lease), not the handlers' own end.
  expect(Date.now() - wokeAt).toBeLessThan(10_000);
  expect(saw(paused.name, 'ZOMBIE')).toBe(true);
  expect(await exited).toBe(0); // it shut itself down gracefully
  const { rows } = await d.pool.query<{ fence: number }>(
    'SELECT fence::int FROM jobs WHERE id = ANY($1::uuid[])',
    [jobs],
  );
  expect(rows.map((r) => r.fence)).toEqual([2, 2, 2]);
});
