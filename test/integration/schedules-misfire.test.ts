import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';
import { api, createSchedule, Executions, runsOf, sleep, type RunRow } from '../support/schedules.js';

/** Misfire tolerance of the test's schedules: a run at most this late is on time. */
const TOLERANCE_MS = 3000;
/** How long the delay tier and the tracker stay down, as the issue asks. */
const DOWN_MS = 30_000;
const WITHIN_MS = 7000;

const POLICIES = {
  skip: { kind: 'skip' },
  fire_latest: { kind: 'fire_latest' },
  fire_all: { kind: 'fire_all', max_count: 3 },
  within: { kind: 'within', window_ms: WITHIN_MS },
} as const;
type Policy = keyof typeof POLICIES;

/** Of the missed occurrences (whole seconds, ascending), those the policy promises to run at decision time `at`. */
function promised(policy: Policy, missed: readonly number[], at: number): number[] {
  switch (policy) {
    case 'skip':
      return [];
    case 'fire_latest':
      return missed.slice(-1);
    case 'fire_all':
      return missed.slice(-3);
    case 'within':
      return missed.filter((t) => t > at - WITHIN_MS);
  }
}

test(`with the delay tier and the tracker down ${DOWN_MS / 1000} s, each misfire policy runs exactly what it promises`, async () => {
  const ns = await useNamespace('schedules-misfire');
  // A short lookahead: the outage outlasts what was generated ahead, so both the runs generated
  // before it (left by the dispatcher) and occurrences never generated (the generator was down)
  // go through the misfire decision.
  const p = await startPipeline(ns, {
    schedules: { misfireToleranceMs: TOLERANCE_MS },
    generator: { intervalMs: 500, settings: { lookaheadMs: 3000, minAhead: 2 } },
  });
  const ex = new Executions();
  const worker = p.worker();
  worker.handle('misfire.tick', (_payload, ctx) => {
    ex.start(ctx.jobId, ctx.dueAt.getTime()).endedAt = Date.now();
  });
  await worker.start();
  const ids = new Map<Policy, string>();
  for (const policy of Object.keys(POLICIES) as Policy[]) {
    const s = await createSchedule(p, {
      tenant: 'acme',
      cron: '* * * * * *',
      time_zone: 'Asia/Kolkata',
      job: { type: 'misfire.tick', resource_class: 'default', payload: { policy } },
      misfire: POLICIES[policy],
    });
    ids.set(policy, s.id);
  }
  const ran = async (id: string) => (await runsOf(p.pool, id)).filter((r) => r.state === 'SUCCEEDED');
  await eventually(
    'every schedule to run twice',
    async () => (await Promise.all([...ids.values()].map(ran))).every((r) => r.length >= 2),
    90_000,
  );

  // Runs generated ahead reach into the outage: the generator has run for each schedule, not only
  // the schedule's creation (a fast pipeline runs twice before the generator's first round).
  await eventually(
    'runs generated into the coming outage',
    async () =>
      (await Promise.all([...ids.values()].map((id) => runsOf(p.pool, id)))).every((rows) =>
        rows.some((r) => r.state === 'SCHEDULED' && r.occurrenceAt > Date.now() + 1500),
      ),
    30_000,
  );

  // The outage: nothing dispatches, nothing generates.
  await Promise.all([p.tracker.stop(), p.delayTier.stop()]);
  const stoppedAt = Date.now();
  await sleep(DOWN_MS);
  // The delay tier comes back first: the late runs generated before the outage are left for the
  // misfire decision, not dispatched. Then the tracker (and its generator) decides.
  const tier = p.newDelayTier();
  await tier.start();
  await eventually(
    'the new delay tier to own every partition',
    () => tier.ownedPartitions().length === ns.services.jobEventPartitions,
    60_000,
  );
  expect(
    await Promise.all(
      [...ids.values()].map(async (id) =>
        (await runsOf(p.pool, id)).filter((r) => r.dispatchedAt !== null && r.dispatchedAt > stoppedAt),
      ),
    ),
  ).toEqual([[], [], [], []]);
  const tracker = p.newTracker();
  await tracker.start();
  const restartedAt = Date.now();
  const horizon = restartedAt + 5000;
  await sleep(horizon + 2000 - Date.now());
  await eventually(
    'the runs up to the horizon to finish',
    async () =>
      (await Promise.all([...ids.values()].map((id) => runsOf(p.pool, id)))).every((rows) =>
        rows
          .filter((r) => r.occurrenceAt < horizon)
          .every((r) => !['SCHEDULED', 'QUEUED', 'RUNNING'].includes(r.state)),
      ),
    30_000,
  );

  for (const [policy, id] of ids) {
    const rows = await runsOf(p.pool, id);
    const succeeded = rows.filter((r) => r.state === 'SUCCEEDED');
    // Each occurrence ran at most once.
    expect(new Set(succeeded.map((r) => r.occurrenceId)).size, policy).toBe(succeeded.length);
    const last = Math.max(
      ...succeeded.filter((r) => r.dispatchedAt! < stoppedAt + 1000).map((r) => r.occurrenceAt),
    );
    // The decision: when the generator skipped the late runs it found (every policy has some:
    // the lookahead generated runs into the outage).
    const misfired = rows.filter((r) => r.state === 'SKIPPED' && r.lastError?.startsWith('misfire'));
    expect(misfired.length, policy).toBeGreaterThan(0);
    const decidedAt = Math.min(...misfired.map((r) => r.finishedAt!));
    expect(decidedAt).toBeGreaterThanOrEqual(restartedAt - 1000);

    const after = succeeded.filter((r) => r.occurrenceAt > last && r.occurrenceAt < horizon);
    const ranTimes = after.map((r) => r.occurrenceAt);
    // Missed: every occurrence after the last run before the outage that was more than the
    // tolerance late when the policy was applied. A decision within 50 ms of a whole second
    // could count that second either way.
    const seconds = (from: number, to: number) => {
      const out: number[] = [];
      for (let t = from + 1000; t < to; t += 1000) out.push(t);
      return out;
    };
    const cut = decidedAt - TOLERANCE_MS;
    // Under `within` a catch-up run must also be dispatched while younger than the window: on a
    // loaded machine the oldest may reach the delay tier too late and be dropped then (SKIPPED as a
    // misfire, older than the window).
    const tooOld = rows.filter((r) => policy === 'within' && r.kind === 'catch_up' && r.state === 'SKIPPED');
    for (const r of tooOld) {
      expect(r.lastError, policy).toMatch(/^misfire/);
      expect(r.finishedAt! - r.occurrenceAt, policy).toBeGreaterThanOrEqual(WITHIN_MS);
    }
    const candidates = [cut - 50, cut + 50].map((c) => {
      const missed = seconds(last, c);
      const onTime = seconds(missed.at(-1) ?? last, horizon);
      const kept = promised(policy, missed, decidedAt).filter(
        (t) => !tooOld.some((r) => r.occurrenceAt === t),
      );
      return [...kept, ...onTime];
    });
    expect(
      candidates,
      `${policy}: ran ${ranTimes.map((t) => new Date(t).toISOString().slice(17, 23)).join(' ')}`,
    ).toContainEqual(ranTimes);
    // The late runs that ran are catch-up runs; on-time ones are regular, at most the tolerance
    // late (counted from when they were generated).
    const catchUps = after.filter((r) => r.kind === 'catch_up');
    for (const r of after) {
      if (r.occurrenceAt < cut - 50) expect(r.kind, policy).toBe('catch_up');
      if (r.occurrenceAt > cut + 50) expect(r.kind, policy).toBe('regular');
    }
    const expectedCatchUps = { skip: 0, fire_latest: 1, fire_all: 3, within: -1 }[policy];
    if (expectedCatchUps >= 0) expect(catchUps, policy).toHaveLength(expectedCatchUps);
    else {
      expect(catchUps.length).toBeGreaterThanOrEqual(
        Math.floor((WITHIN_MS - TOLERANCE_MS) / 1000) - 1 - tooOld.length,
      );
      expect(catchUps.length).toBeLessThanOrEqual(Math.ceil((WITHIN_MS - TOLERANCE_MS) / 1000));
    }
    for (const r of after.filter((x: RunRow) => x.kind === 'regular')) {
      expect(r.dispatchedAt! - Math.max(r.dueAt, r.createdAt), policy).toBeLessThanOrEqual(TOLERANCE_MS);
    }
    // The schedule goes on every second after the outage.
    expect(ranTimes.at(-1), policy).toBe(Math.floor((horizon - 1) / 1000) * 1000);
    // Nothing ran twice in the worker.
    const jobIds = new Set(succeeded.map((r) => r.id));
    expect(ex.of(jobIds).length, policy).toBe(jobIds.size);
    // The schedule's view counts every misfire: runs skipped, and occurrences never generated.
    const v = (await api(p, 'GET', `/v1/schedules/${id}`)).json;
    const skippedRuns = (await runsOf(p.pool, id)).filter(
      (r) => r.state === 'SKIPPED' && r.lastError?.startsWith('misfire'),
    );
    expect(v.misfires, policy).toBe(v.misfires_skipped + skippedRuns.length);
  }
}, 300_000);

// The generator decides on late runs every pass while the delay tier is down; a slow recovery lets
// more runs miss after a catch-up was dispatched: those count against the same outage's quota.
test('with only the delay tier down, the generator keeps deciding on the late runs: still exactly the promised catch-up runs', async () => {
  const ns = await useNamespace('schedules-misfire-tier');
  // The default lookahead (2 minutes): every run of the outage was generated before it.
  const p = await startPipeline(ns, {
    schedules: { misfireToleranceMs: TOLERANCE_MS },
    generator: { intervalMs: 500 },
  });
  const worker = p.worker();
  worker.handle('misfire.tier', () => undefined);
  await worker.start();
  const ids = new Map<Policy, string>();
  for (const policy of Object.keys(POLICIES) as Policy[]) {
    const s = await createSchedule(p, {
      tenant: 'acme',
      cron: '* * * * * *',
      time_zone: 'Pacific/Chatham',
      job: { type: 'misfire.tier', resource_class: 'io' },
      misfire: POLICIES[policy],
    });
    ids.set(policy, s.id);
  }
  const ran = async (id: string) => (await runsOf(p.pool, id)).filter((r) => r.state === 'SUCCEEDED');
  await eventually(
    'every schedule to run twice',
    async () => (await Promise.all([...ids.values()].map(ran))).every((r) => r.length >= 2),
    90_000,
  );
  await p.delayTier.stop();
  const stoppedAt = Date.now();
  await sleep(DOWN_MS);
  const tier = p.newDelayTier();
  await tier.start();
  await eventually(
    'the new delay tier to own every partition',
    () => tier.ownedPartitions().length === ns.services.jobEventPartitions,
    60_000,
  );
  const backAt = Date.now();
  await sleep(TOLERANCE_MS + 3000);

  for (const [policy, id] of ids) {
    const rows = await runsOf(p.pool, id);
    const succeeded = rows.filter((r) => r.state === 'SUCCEEDED');
    expect(new Set(succeeded.map((r) => r.occurrenceId)).size, policy).toBe(succeeded.length);
    const last = Math.max(
      ...succeeded.filter((r) => r.dispatchedAt! < stoppedAt + 1000).map((r) => r.occurrenceAt),
    );
    const window = rows.filter((r) => r.occurrenceAt > last && r.occurrenceAt < backAt);
    const catchUps = window.filter((r) => r.kind === 'catch_up' && r.state !== 'SKIPPED');
    // Late runs the policy dropped, while the tier was down and once it was back.
    const dropped = window.filter((r) => r.state === 'SKIPPED');
    expect(
      dropped.every((r) => r.lastError?.startsWith('misfire')),
      policy,
    ).toBe(true);
    const expected = { skip: 0, fire_latest: 1, fire_all: 3, within: -1 }[policy];
    if (expected >= 0)
      expect(
        catchUps.map((r) => r.state),
        policy,
      ).toEqual(Array(expected).fill('SUCCEEDED'));
    else {
      // within: each catch-up was dispatched while younger than the window.
      expect(catchUps.length, policy).toBeGreaterThan(0);
      for (const r of catchUps)
        expect(r.dispatchedAt! - r.occurrenceAt, policy).toBeLessThanOrEqual(WITHIN_MS);
    }
    // Every second of the window is accounted for: it ran, or the policy dropped it as a misfire
    // (a run due just before the tier was back may still miss its time while the tier rebuilds;
    // it then belongs to the same outage, whose catch-up quota is spent).
    const seen = window
      .filter((r) => r.state === 'SUCCEEDED' || r.state === 'SKIPPED')
      .map((r) => r.occurrenceAt)
      .sort((a, b) => a - b);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!, policy).toBe(1000);
    expect(
      window.filter(
        (r) => ['SCHEDULED', 'QUEUED', 'RUNNING'].includes(r.state) && r.occurrenceAt < backAt - 2000,
      ),
    ).toEqual([]);
  }
}, 300_000);
