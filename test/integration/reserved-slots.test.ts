import { expect, test } from 'vitest';
import type { TaskContext, WorkerOptions } from '@kairos/worker-sdk';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

/** The worker's slots; with reservation, RESERVED of them are critical's alone. */
const CONCURRENCY = 4;
const RESERVED = 2;
/** Slow `default` jobs due at once: a backlog of several rounds of the slots. */
const FLOOD = 24;
const FLOOD_MS = 2000;
/** Critical jobs created once the flood runs (as many as critical's reserved slots). */
const CRITICAL = RESERVED;

interface Run {
  readonly class: string;
  readonly dueAt: number;
  readonly startedAt: number;
  finishedAt?: number;
}

/**
 * One worker serving `critical` and `default`: a flood of slow `default` jobs due now, then a few
 * `critical` jobs. Returns every handler run and, per critical job, what the flood had done by
 * the time it started.
 */
async function floodThenCritical(label: string, options: Partial<WorkerOptions>) {
  const ns = await useNamespace(label);
  const p = await startPipeline(ns);
  const runs = new Map<string, Run>();
  const worker = p.worker({
    resourceClasses: ['critical', 'default'],
    concurrency: CONCURRENCY,
    ...options,
    shutdownTimeoutMs: 500,
  });
  const handler = (rc: string) => async (payload: { ms: number }, ctx: TaskContext) => {
    const run: Run = { class: rc, dueAt: ctx.dueAt.getTime(), startedAt: Date.now() };
    runs.set(ctx.jobId, run);
    // The flood is cut short when the worker stops at the end of the test.
    await new Promise((r) => {
      setTimeout(r, payload.ms);
      ctx.signal.addEventListener('abort', r);
    });
    if (!ctx.signal.aborted) run.finishedAt = Date.now();
  };
  worker.handle<{ ms: number }>('flood.work', handler('default'));
  worker.handle<{ ms: number }>('urgent.work', handler('critical'));
  await worker.start();
  const create = async (rc: string, type: string, n: number, ms: number) =>
    (
      await p.commands.createJobs(
        Array.from({ length: n }, () => ({ tenant: 'acme', type, resource_class: rc, payload: { ms } })),
      )
    ).map((r) => r.job.id);

  // Unloaded first: how late a critical job starts with nothing else running (the baseline).
  const idle = await create('critical', 'urgent.work', CRITICAL, 10);
  await eventually('the unloaded critical jobs to finish', () =>
    idle.every((id) => runs.get(id)?.finishedAt),
  );
  const flood = await create('default', 'flood.work', FLOOD, FLOOD_MS);
  await eventually(
    'the flood to fill the slots it may use',
    () => flood.filter((id) => runs.has(id)).length >= 2,
  );
  const critical = await create('critical', 'urgent.work', CRITICAL, 10);
  await eventually(
    'the critical jobs to finish',
    () => critical.every((id) => runs.get(id)?.finishedAt),
    90_000,
  );

  const floodRuns = flood.map((id) => runs.get(id));
  const at = (t: number) => ({
    floodStarted: floodRuns.filter((r) => r && r.startedAt <= t).length,
    floodFinished: floodRuns.filter((r) => r?.finishedAt !== undefined && r.finishedAt <= t).length,
  });
  const lateness = (ids: string[]) => ids.map((id) => runs.get(id)!.startedAt - runs.get(id)!.dueAt);
  const criticalStarts = critical.map((id) => runs.get(id)!.startedAt);
  const result = {
    unloadedLatenessMs: lateness(idle),
    loadedLatenessMs: lateness(critical),
    atFirstCritical: at(Math.min(...criticalStarts)),
    atLastCritical: at(Math.max(...criticalStarts)),
  };
  console.log(label, JSON.stringify(result));
  return result;
}

test(`with ${RESERVED} of ${CONCURRENCY} slots reserved for critical, critical jobs start while a flood of ${FLOOD} default jobs is still queued`, async () => {
  // A small buffer too: split like the slots (4 tasks each), the flood pauses its own topic only.
  const r = await floodThenCritical('reserve-on', {
    reservedSlots: { critical: RESERVED },
    maxBufferedTasks: 2 * CONCURRENCY,
  });
  // Every critical job started while most of the flood had not even started: it did not queue
  // behind it (the flood has only the 2 shared slots, and each of its jobs holds one 2 s).
  expect(r.atLastCritical.floodStarted).toBeLessThanOrEqual(FLOOD / 2);
  expect(r.atLastCritical.floodFinished).toBeLessThan(FLOOD / 2);
});

test(`without reservation (control), the same critical jobs queue behind the flood`, async () => {
  const r = await floodThenCritical('reserve-off', {});
  // The delay is real: the first critical job started only once the flood taken before it had
  // started, so at least half the flood had finished by then.
  expect(r.atFirstCritical.floodFinished).toBeGreaterThanOrEqual(FLOOD / 2);
});
