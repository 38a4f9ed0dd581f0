import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import {
  api,
  createSchedule,
  Executions,
  runsOf,
  sleep,
  type Execution,
  type RunRow,
} from '../support/schedules.js';

const POLICIES = ['allow', 'skip', 'buffer_one', 'cancel_previous'] as const;
type Policy = (typeof POLICIES)[number];

function maxConcurrent(xs: readonly Execution[]): number {
  const edges = xs.flatMap((e): [number, number][] => [
    [e.startedAt, 1],
    [e.endedAt ?? Infinity, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d));
  return max;
}

test('a slow handler under each overlap policy runs exactly what the policy promises', async () => {
  const ns = await useNamespace('schedules-overlap');
  const p = await startPipeline(ns, { delayTier: { overlapRecheckMs: 300 } });
  const ex = new Executions();
  // Leases of 3 s: heartbeats every second, so a cancel reaches a running handler within ~1 s.
  const worker = p.worker({ leaseMs: 3000 });
  worker.handle<{ ms: number }>('overlap.slow', async (payload, ctx) => {
    const e = ex.start(ctx.jobId, ctx.dueAt.getTime());
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, payload.ms);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    e.endedAt = Date.now();
    if (ctx.signal.aborted) {
      const reason: unknown = ctx.signal.reason;
      e.aborted = reason instanceof Error ? reason.name : String(reason);
      throw reason instanceof Error ? reason : new Error(String(reason));
    }
  });
  await worker.start();

  const ids = new Map<Policy, string>();
  for (const overlap of POLICIES) {
    const s = await createSchedule(p, {
      tenant: 'acme',
      // cancel_previous: a 5 s handler every 2 s, so each run is cancelled by the next one.
      cron: overlap === 'cancel_previous' ? '*/2 * * * * *' : '* * * * * *',
      time_zone: 'Australia/Lord_Howe',
      job: {
        type: 'overlap.slow',
        // Apart where possible: a worker takes a task partition's next batch only once the
        // results of the current one are in, so slow tasks of one class delay each other.
        resource_class: { allow: 'critical', skip: 'default', buffer_one: 'default', cancel_previous: 'io' }[
          overlap
        ],
        payload: { ms: overlap === 'cancel_previous' ? 5000 : 2500 },
        max_attempts: 1,
      },
      overlap,
    });
    ids.set(overlap, s.id);
  }
  const jobsOf = async (policy: Policy) => runsOf(p.pool, ids.get(policy)!);
  await eventually(
    'every schedule to run',
    async () => {
      const ran = await Promise.all(POLICIES.map(async (o) => new Set((await jobsOf(o)).map((r) => r.id))));
      return ran.every((set) => ex.of(set).length > 0);
    },
    90_000,
  );
  const from = Date.now() + 1000;
  await sleep(16_000);
  // The window ends 2 s before the pause: a run due just before a pause and not dispatched yet
  // (a loaded machine) is SKIPPED by the pause, rightly, whatever its overlap policy.
  const to = Date.now() - 2000;
  for (const id of ids.values()) expect((await api(p, 'POST', `/v1/schedules/${id}/pause`)).status).toBe(200);
  await eventually(
    'the runs of the window to finish',
    async () =>
      (await Promise.all(POLICIES.map(jobsOf))).every((rows) =>
        rows
          .filter((r) => r.occurrenceAt < to)
          .every((r) => !['SCHEDULED', 'QUEUED', 'RUNNING'].includes(r.state)),
      ),
    30_000,
  );

  const view = async (policy: Policy) => {
    const rows = (await jobsOf(policy)).filter((r) => r.occurrenceAt >= from && r.occurrenceAt < to);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const execs = ex.of(new Set(byId.keys())).sort((a, b) => a.startedAt - b.startedAt);
    const all = ex.of(new Set((await jobsOf(policy)).map((r) => r.id)));
    return { rows, execs, all, byId };
  };
  const states = (rows: readonly RunRow[]) =>
    rows.reduce<Record<string, number>>((m, r) => ({ ...m, [r.state]: (m[r.state] ?? 0) + 1 }), {});

  // allow: every occurrence runs, runs overlap.
  {
    const { rows, execs } = await view('allow');
    expect(states(rows)).toEqual({ SUCCEEDED: rows.length });
    expect(execs).toHaveLength(rows.length);
    expect(maxConcurrent(execs)).toBeGreaterThanOrEqual(2);
  }

  // skip: runs never overlap; an occurrence that came due while a run was unfinished is SKIPPED.
  {
    const { rows, all } = await view('skip');
    expect(maxConcurrent(all)).toBe(1);
    const skipped = rows.filter((r) => r.state === 'SKIPPED');
    expect(skipped.length).toBeGreaterThan(0);
    expect(rows.every((r) => ['SUCCEEDED', 'SKIPPED'].includes(r.state))).toBe(true);
    const ran = rows.filter((r) => r.state === 'SUCCEEDED');
    for (const s of skipped) {
      expect(s.lastError).toBe('overlap skip: the previous run is unfinished');
      // A run was dispatched before it and finished (recorded by the tracker) after it was skipped.
      const cover = (await jobsOf('skip')).filter(
        (r) => r.state === 'SUCCEEDED' && r.dispatchedAt! <= s.finishedAt! && r.updatedAt >= s.finishedAt!,
      );
      expect(cover, new Date(s.occurrenceAt).toISOString()).toHaveLength(1);
    }
    // A 2.5 s handler every second: at most one run in three (fewer when the worker is slow to
    // start a task: the SDK takes a partition's next batch once the current one's results are in).
    expect(ran.length).toBeGreaterThanOrEqual(2);
    expect(ran.length).toBeLessThanOrEqual(Math.ceil(rows.length / 3));
  }

  // buffer_one: runs never overlap; at most one occurrence waits, dispatched as soon as the
  // previous run is done; the others are SKIPPED.
  {
    const { rows, execs, all } = await view('buffer_one');
    expect(maxConcurrent(all)).toBe(1);
    const skipped = rows.filter((r) => r.state === 'SKIPPED');
    expect(skipped.length).toBeGreaterThan(0);
    // The run still waiting when the test pauses the schedule is skipped for the pause instead.
    for (const s of skipped) {
      // buffer_one skips when the previous run is unfinished or another run already waits.
      expect(
        s.lastError?.startsWith('overlap buffer_one:') || s.lastError === 'the schedule is paused',
        s.lastError ?? '',
      ).toBe(true);
    }
    expect(skipped.some((s) => s.lastError === 'overlap buffer_one: the previous run is unfinished')).toBe(
      true,
    );
    const ran = rows.filter((r) => r.state === 'SUCCEEDED');
    // Buffered runs waited past their occurrence's time and then ran.
    expect(ran.filter((r) => r.dispatchedAt! - r.occurrenceAt > 500).length).toBeGreaterThan(0);
    // Back to back: the waiting run is dispatched as soon as the previous one is recorded done
    // (within the 300 ms recheck and a dispatch round), not at a later occurrence.
    for (let i = 1; i < execs.length; i++) {
      const prev = rows.find((r) => r.id === execs[i - 1]!.jobId)!;
      const next = rows.find((r) => r.id === execs[i]!.jobId)!;
      if (next.dispatchedAt! - next.occurrenceAt < 100) continue; // it did not have to wait
      expect(next.dispatchedAt! - prev.updatedAt, new Date(next.occurrenceAt).toISOString()).toBeLessThan(
        1000,
      );
    }
    // Runs in order of their occurrences: the waiting one is the oldest.
    const order = execs.map((e) => rows.find((r) => r.id === e.jobId)!.occurrenceAt);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  }

  // cancel_previous: every occurrence is dispatched on time; each run still going when the next
  // comes due is cancelled (its handler aborted with JobCancelled).
  {
    const { rows, execs } = await view('cancel_previous');
    expect(rows.every((r) => r.dispatchedAt !== null && r.dispatchedAt - r.dueAt < 1000)).toBe(true);
    expect(rows.filter((r) => r.state === 'SKIPPED')).toEqual([]);
    const cancelled = rows.filter((r) => r.state === 'CANCELLED');
    // All but the newest runs of the window were cancelled by their successor.
    expect(cancelled.length).toBeGreaterThanOrEqual(rows.length - 2);
    let aborted = 0;
    for (const c of cancelled) {
      const e = execs.find((x) => x.jobId === c.id);
      // Cancelled while queued: the worker discarded it before it ran. While running: aborted.
      if (!e) continue;
      aborted++;
      expect(e.aborted, new Date(c.occurrenceAt).toISOString()).toBe('JobCancelled');
      // Aborted within ~2 heartbeats of the next occurrence's due time.
      expect(e.endedAt! - (c.occurrenceAt + 2000)).toBeLessThan(2500);
    }
    expect(aborted).toBeGreaterThan(0);
  }

  // Every skip is counted, once: in the schedule's view and in the delay tier's
  // kairos_schedule_runs_total (a skip for the pause counts too).
  for (const policy of ['skip', 'buffer_one'] as const) {
    const id = ids.get(policy)!;
    const skips = async () =>
      (await jobsOf(policy)).filter((r) => r.state === 'SKIPPED' && !r.lastError?.startsWith('misfire'))
        .length;
    await eventually(
      `${policy}: its skips counted`,
      async () => {
        const v = (await api(p, 'GET', `/v1/schedules/${id}`)).json;
        const metric = new RegExp(
          `^kairos_schedule_runs_total\\{schedule="${id}",outcome="skipped"\\} (\\d+)$`,
          'm',
        );
        const counted = Number(metric.exec(await p.delayTier.metrics.text())?.[1] ?? 0);
        const n = await skips();
        return n > 0 && v.skips === n && counted === n;
      },
      10_000,
    );
  }
}, 300_000);
