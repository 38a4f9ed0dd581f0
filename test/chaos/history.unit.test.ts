import { describe, expect, test } from 'vitest';
import {
  canaryRecovery,
  checkHistory,
  failoverMs,
  formatFaultTable,
  type Canary,
  type History,
} from './history.js';
import { planLoad } from './load-plan.js';

const A = '00000000-0000-7000-8000-00000000000a';
const B = '00000000-0000-7000-8000-00000000000b';

const canaries = (atMs: number): Canary[] =>
  ['critical', 'default'].map((rc) => ({
    resourceClass: rc,
    createdMs: atMs,
    state: 'SUCCEEDED',
    finishedMs: atMs + 500,
  }));

function history(over: Partial<History> = {}): History {
  return {
    jobs: [{ id: A, dueMs: 1000 }],
    states: new Map([[A, 'SUCCEEDED']]),
    dispatches: [{ jobId: A, fence: 1, dueMs: 1000, dispatchedMs: 1000 }],
    starts: [{ jobId: A, fence: 1, dueMs: 1000, startedMs: 1010 }],
    effects: [{ jobId: A, fence: 1, atMs: 1020 }],
    calls: [{ jobId: A, fence: 1, atMs: 1010 }],
    finishedMs: new Map([[A, 1030]]),
    terminalFirst: new Map([[A, 'SUCCEEDED|1|1']]),
    terminalLast: new Map([[A, 'SUCCEEDED|1|1']]),
    canaries: [...canaries(0), ...canaries(5000)],
    faults: [
      { name: 'baseline', atMs: 0 },
      { name: 'kill', atMs: 5000 },
    ],
    ...over,
  };
}

describe('checkHistory', () => {
  test('a job run once, on time, is clean; the table counts it in its due time’s window', () => {
    const { rows, violations } = checkHistory(history());
    expect(violations).toEqual([]);
    expect(rows.map((r) => [r.fault, r.jobs, r.effects, r.recoverMs])).toEqual([
      ['baseline', 1, 1, 0],
      ['kill', 0, 0, 500],
    ]);
  });

  test('lost: not SUCCEEDED, or SUCCEEDED without its effect, or missing', () => {
    expect(checkHistory(history({ states: new Map([[A, 'RUNNING']]) })).rows[0]?.lost).toBe(1);
    expect(checkHistory(history({ effects: [] })).rows[0]?.lost).toBe(1);
    expect(checkHistory(history({ states: new Map() })).violations[0]).toMatch(/lost \(state missing/);
  });

  test('early: a start before its dispatch’s due time or an effect before the acknowledged due time', () => {
    const early = history({ starts: [{ jobId: A, fence: 1, dueMs: 1000, startedMs: 900 }] });
    expect(checkHistory(early).rows[0]?.early).toBe(1);
    const moved = history({ jobs: [{ id: A, dueMs: 2000 }] }); // rescheduled to 2000, ran at 1020
    expect(checkHistory(moved).violations[0]).toMatch(/started before due/);
  });

  test('an effect applied twice is a duplicate; a second dispatch of one attempt is only counted', () => {
    const twice = history({
      effects: [
        { jobId: A, fence: 1, atMs: 1020 },
        { jobId: A, fence: 2, atMs: 1030 },
      ],
      dispatches: [
        { jobId: A, fence: 1, dueMs: 1000, dispatchedMs: 1000 },
        { jobId: A, fence: 1, dueMs: 1000, dispatchedMs: 1001 },
      ],
    });
    const { rows, violations } = checkHistory(twice);
    expect(rows[0]).toMatchObject({ duplicates: 1, effects: 2, redispatches: 1 });
    expect(violations).toEqual([expect.stringMatching(/effect applied 2 times/)]);
    const redelivered = history({
      dispatches: [
        { jobId: A, fence: 1, dueMs: 1000, dispatchedMs: 1000 },
        { jobId: A, fence: 1, dueMs: 1000, dispatchedMs: 1001 },
      ],
    });
    expect(checkHistory(redelivered).violations).toEqual([]);
  });

  test('a cancelled job: CANCELLED, no effect, nothing dispatched after the cancel was acknowledged', () => {
    const cancelled = { jobs: [{ id: A, dueMs: 1000, cancelAckMs: 500 }], effects: [], starts: [] };
    const ok = history({ ...cancelled, states: new Map([[A, 'CANCELLED']]), dispatches: [] });
    expect(checkHistory(ok).violations).toEqual([]);
    expect(checkHistory(ok).rows[0]).toMatchObject({ jobs: 1, dropped: 1, effects: 0 });
    const dispatched = history({ ...cancelled, states: new Map([[A, 'CANCELLED']]) });
    expect(checkHistory(dispatched).rows[0]?.cancelBroken).toBe(1);
    const ran = history({ jobs: [{ id: A, dueMs: 1000, cancelAckMs: 500 }], dispatches: [] });
    expect(checkHistory(ran).violations[0]).toMatch(/cancel broken \(state SUCCEEDED, 1 effects\)/);
  });

  test('a job that may be dropped (a schedule’s run) may end CANCELLED or SKIPPED without effect, not RUNNING', () => {
    const run = { jobs: [{ id: B, dueMs: 1000, mayDrop: true }], effects: [], dispatches: [], starts: [] };
    expect(checkHistory(history({ ...run, states: new Map([[B, 'SKIPPED']]) })).violations).toEqual([]);
    expect(checkHistory(history({ ...run, states: new Map([[B, 'RUNNING']]) })).rows[0]?.lost).toBe(1);
  });

  test('a handler call that began after its job finished is a violation, whatever the effect table says', () => {
    const rerun = history({
      calls: [
        { jobId: A, fence: 1, atMs: 1010 },
        { jobId: A, fence: 1, atMs: 4000 }, // a new group ran it again; fencedEffect kept one row
      ],
    });
    const { rows, violations } = checkHistory(rerun);
    expect(rows[0]).toMatchObject({ rerunsFinished: 1, duplicates: 0 });
    expect(violations).toEqual([expect.stringMatching(/handler ran 1 times after the job finished/)]);
    // Concurrent calls before the finish (a zombie and its successor) are not reruns of a finished job.
    const before = history({
      calls: [
        { jobId: A, fence: 1, atMs: 1010 },
        { jobId: A, fence: 2, atMs: 1029 },
      ],
    });
    expect(checkHistory(before).violations).toEqual([]);
  });

  test('a terminal job that changed after (state, attempt, fence or attempt rows) is a violation', () => {
    const changed = history({ terminalLast: new Map([[A, 'FAILED|2|2']]) });
    const { rows, violations } = checkHistory(changed);
    expect(rows[0]?.terminalChanged).toBe(1);
    expect(violations).toEqual([
      expect.stringMatching(/changed after it was terminal \(SUCCEEDED\|1\|1 -> FAILED\|2\|2\)/),
    ]);
  });

  test('a fault whose canaries never recover, or recover too late, is a violation', () => {
    expect(checkHistory(history({ canaries: canaries(0) })).violations).toEqual([
      'kill: canary not recovered within 120000 ms (never)',
    ]);
    expect(checkHistory(history(), { canaryRecoveryMs: 100 }).violations).toHaveLength(1);
  });

  test('a failover over the target is a violation', () => {
    const faults = [
      { name: 'baseline', atMs: 0 },
      { name: 'kill', atMs: 5000, failoverMs: 12_000 },
    ];
    expect(checkHistory(history({ faults })).violations).toEqual([
      'kill: failover took 12000 ms (target 10000)',
    ]);
    expect(formatFaultTable(checkHistory(history({ faults })).rows)).toContain(
      '| kill | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0.0 | 0.5 | 12.0 |',
    );
  });
});

test('canaryRecovery: the slowest class’s first success among canaries created after the fault', () => {
  const c: Canary[] = [
    { resourceClass: 'io', createdMs: 900, state: 'SUCCEEDED', finishedMs: 2000 }, // before the fault
    { resourceClass: 'io', createdMs: 1000, state: 'QUEUED' },
    { resourceClass: 'io', createdMs: 3000, state: 'SUCCEEDED', finishedMs: 4000 },
    { resourceClass: 'default', createdMs: 1000, state: 'SUCCEEDED', finishedMs: 1200 },
  ];
  expect(canaryRecovery(c, 1000)).toBe(3000);
  expect(canaryRecovery(c, 5000)).toBeUndefined();
});

test('failoverMs: the latest first dispatch of the orphaned partitions’ jobs after max(kill, due)', () => {
  const jobs = [
    { shard: 1, dueMs: 900, firstDispatchMs: 7000 }, // due before the kill: from the kill
    { shard: 1, dueMs: 3000, firstDispatchMs: 8000 },
    { shard: 2, dueMs: 3000, firstDispatchMs: 30_000 }, // not orphaned
    { shard: 1, dueMs: 50_000, firstDispatchMs: 90_000 }, // after the window
  ];
  expect(failoverMs(jobs, new Set([1]), 1000, 20_000)).toBe(6000);
  expect(failoverMs([{ shard: 1, dueMs: 2000, firstDispatchMs: undefined }], new Set([1]), 1000, 5000)).toBe(
    Infinity,
  );
});

test('planLoad: the same seed gives the same plan; cancels and reschedules land ≥ 2 s before due', () => {
  const a = planLoad({ seed: 42, jobs: 2000, durationMs: 160_000 });
  expect(planLoad({ seed: 42, jobs: 2000, durationMs: 160_000 })).toEqual(a);
  expect(planLoad({ seed: 43, jobs: 2000, durationMs: 160_000 })).not.toEqual(a);
  expect(new Set(a.map((j) => j.resourceClass))).toEqual(new Set(['critical', 'default', 'io']));
  const cancels = a.filter((j) => j.cancelMs !== undefined);
  const moves = a.filter((j) => j.reschedule !== undefined);
  expect(cancels.length).toBeGreaterThan(20);
  expect(moves.length).toBeGreaterThan(20);
  for (const j of cancels) expect(j.dueMs - (j.cancelMs ?? 0)).toBeGreaterThanOrEqual(2000);
  for (const j of moves) expect(j.reschedule!.toMs).toBeGreaterThan(j.dueMs);
  for (const j of a) expect(j.submitMs).toBeLessThanOrEqual(j.dueMs);
});
