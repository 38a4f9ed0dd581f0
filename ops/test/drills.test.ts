import { expect, test } from 'vitest';
import {
  attemptBars,
  backlogSeries,
  breakerSpans,
  callsPerSecond,
  counterSum,
  criticalLateness,
  dailyCronAt,
  drillInputs,
  DRILLS,
  gaugeByLabel,
  herdRelease,
  jitterParts,
  jobChecks,
  lateness,
  longestPgOnly,
  midnightAfter,
  modeAt,
  modeSpans,
  parseRetryLine,
  parseWorkerLine,
  quantile,
  redisMemory,
  release,
  releaseCurve,
  seededRandom,
  spread,
  tallyJobs,
  verdictLine,
  type JobRow,
} from '@kairos/ops';

const job = (id: string, over: Partial<JobRow> = {}): JobRow => ({
  id,
  state: 'SUCCEEDED',
  dueAtMs: 10_000,
  dispatchedAtMs: 10_050,
  attempt: 1,
  ...over,
});

test('a tally counts lost, early, doubled effects and redispatches; its checks name what failed', () => {
  const rows = [
    job('a'),
    job('b', { state: 'SCHEDULED', dispatchedAtMs: undefined }),
    job('c', { dispatchedAtMs: 9_999 }),
    job('d', { attempt: 2 }),
  ];
  const tally = tallyJobs(
    rows,
    new Map([
      ['a', 1],
      ['d', 2],
    ]),
  );
  expect(tally).toEqual({ jobs: 4, lost: 1, early: 1, duplicates: 1, redispatched: 1 });
  expect(
    jobChecks(tally)
      .filter((c) => !c.ok)
      .map((c) => c.why),
  ).toEqual(['1 of 4 jobs not SUCCEEDED', '1 jobs dispatched before due', "1 jobs' effect applied twice"]);
  expect(jobChecks(tallyJobs([job('a')], new Map([['a', 1]]))).every((c) => c.ok)).toBe(true);
});

test('lateness is per dispatched job, by due time from the start, in order', () => {
  const rows = [
    job('late', { dueAtMs: 12_000, dispatchedAtMs: 15_000 }),
    job('x'),
    job('never', { dispatchedAtMs: undefined }),
  ];
  expect(lateness(rows, 10_000)).toEqual([
    { dueS: 0, lateMs: 50 },
    { dueS: 2, lateMs: 3000 },
  ]);
});

test('the verdict line: PASS with the numbers, FAIL with every reason first', () => {
  const numbers = { jobs: 10, lost: 0, takeover_ms: 6360.4 };
  expect(verdictLine('dispatcher-crash', { numbers, failures: [] })).toBe(
    'PASS dispatcher-crash: jobs=10, lost=0, takeover_ms=6360.4',
  );
  expect(
    verdictLine('split-brain', { numbers: { refused: 0 }, failures: ['nothing refused', '2 doubled'] }),
  ).toBe('FAIL split-brain: nothing refused; 2 doubled; refused=0');
});

test('drill options: defaults, overrides, and a clear error for bad input', () => {
  const zombie = DRILLS.find((d) => d.name === 'zombie-worker');
  expect(zombie).toBeDefined();
  expect(drillInputs(zombie!, {})).toEqual({ jobs: 4, pause: 20, work: 3000 });
  expect(drillInputs(zombie!, { pause: '50' }).pause).toBe(50);
  expect(() => drillInputs(zombie!, { pause: '5' })).toThrow(
    '--pause must be an integer from 10 to 300, got 5',
  );
  expect(() => drillInputs(zombie!, { jobs: 'many' })).toThrow(/--jobs must be an integer/);
  expect(DRILLS.map((d) => d.name)).toEqual([
    'dispatcher-crash',
    'split-brain',
    'zombie-worker',
    'retry-storm',
    'redis-oom',
    'midnight-herd',
  ]);
});

test('a seed gives the same numbers every time', () => {
  const a = seededRandom(7);
  const b = seededRandom(7);
  const xs = Array.from({ length: 5 }, () => a());
  expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
  expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  expect(seededRandom(8)()).not.toBe(xs[0]);
});

test('a counter is summed over its labels, other metrics and comments ignored', () => {
  const text = [
    '# HELP kairos_dispatched_total Jobs dispatched',
    'kairos_dispatched_total{resource_class="critical"} 3',
    'kairos_dispatched_total{resource_class="default"} 4',
    'kairos_dispatched_totally 100',
    'kairos_expired_total 9',
  ].join('\n');
  expect(counterSum(text, 'kairos_dispatched_total')).toBe(7);
});

test('worker lines become events, and each attempt a bar from its start to its effect', () => {
  const lines: [string, string, number][] = [
    ['worker#1', 'READY', 0],
    ['worker#1', 'START j1 1', 1000],
    ['worker#2', 'START j1 2', 8000],
    ['worker#2', 'EFFECT j1 2 applied', 9000],
    ['worker#1', 'EFFECT j1 1 zombie', 21_000],
  ];
  const events = lines.flatMap(([app, line, at]) => parseWorkerLine(app, line, at) ?? []);
  expect(events.map((e) => e.what)).toEqual(['START', 'START', 'applied', 'zombie']);
  expect(attemptBars(events, ['j1'], 30)).toEqual([
    { job: 'job 1', attempt: 'worker#1 fence 1: zombie', from: 1, to: 21 },
    { job: 'job 1', attempt: 'worker#2 fence 2: applied', from: 8, to: 9 },
  ]);
});

test('a scheduled retry is read from the tracker’s line: the failed attempt and its delay', () => {
  const t0 = Date.parse('2026-12-03T10:00:00.000Z');
  const line = JSON.stringify({
    level: 30,
    time: '2026-12-03T10:00:05.000Z',
    jobId: 'j1',
    attempt: 3,
    dueAt: '2026-12-03T10:00:12.500Z',
    msg: 'attempt failed; retry scheduled',
  });
  expect(parseRetryLine(line, t0)).toEqual({ s: 5, job: 'j1', failed: 2, delayMs: 7500 });
  expect(parseRetryLine('{"msg":"tracker started"}', t0)).toBeUndefined();
  expect(parseRetryLine('START j1 1', t0)).toBeUndefined();
});

test('jitter parts: the delay less its exponential part, capped ones left out; their spread', () => {
  const backoff = { baseMs: 1000, capMs: 20_000, jitterMs: 10_000 };
  const retry = (failed: number, delayMs: number) => ({ s: 0, job: 'j', failed, delayMs });
  // failed 1: 1 s + jitter; failed 2: 2 s + jitter; failed 5: 16 s + up to 10 s reaches the cap.
  expect(jitterParts([retry(1, 1500), retry(2, 11_000), retry(5, 20_000)], backoff)).toEqual([500, 9000]);
  expect(spread([500, 9000])).toEqual({ rangeMs: 8500, sdMs: 4250 });
  expect(spread([7])).toEqual({ rangeMs: 0, sdMs: 0 });
});

test('downstream calls per second by status, and the breaker’s open and ramping spans', () => {
  const call = (atMs: number, status: number, job = 'j') => ({ atMs, job, attempt: 1, status });
  expect(callsPerSecond([call(100, 200), call(900, 503), call(950, 200), call(1200, 200)])).toEqual([
    { s: 0, status: '200', n: 2 },
    { s: 0, status: '503', n: 1 },
    { s: 1, status: '200', n: 1 },
  ]);
  const changes = [
    { s: 10, state: 'open' as const },
    { s: 20, state: 'ramping' as const },
    { s: 20.05, state: 'open' as const },
    { s: 30, state: 'ramping' as const },
  ];
  expect(breakerSpans(changes, 45)).toEqual([
    { from: 10, to: 20, state: 'open' },
    { from: 20, to: 20.05, state: 'ramping' },
    { from: 20.05, to: 30, state: 'open' },
    { from: 30, to: 45, state: 'ramping' },
  ]);
  expect(breakerSpans([...changes, { s: 50, state: 'closed' }], 60).at(-1)).toEqual({
    from: 30,
    to: 50,
    state: 'ramping',
  });
});

test('the release after recovery: the backlog waiting, its busiest second and how long it took', () => {
  const ok = (atMs: number, job: string) => ({ atMs, job, attempt: 2, status: 200 });
  const due = new Map([
    ['early-done', 1000],
    ['a', 2000],
    ['b', 3000],
    ['c', 4000],
    ['later', 12_000],
  ]);
  const calls = [
    ok(1500, 'early-done'),
    { atMs: 2100, job: 'a', attempt: 1, status: 503 },
    ok(10_100, 'a'),
    ok(10_900, 'b'),
    ok(12_500, 'c'),
    ok(12_600, 'later'),
  ];
  // From 10 s: a, b and c wait (early-done had succeeded, later was not due yet).
  expect(release(calls, due, 10_000)).toEqual({ backlog: 3, peakPerSecond: 2, drainS: 2.5 });
});

test('Redis memory from INFO, a gauge per label from /metrics', () => {
  expect(
    redisMemory('# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:67108864\r\n'),
  ).toEqual({
    used: 1_048_576,
    max: 67_108_864,
  });
  const text = [
    '# TYPE kairos_pg_fallback_active gauge',
    'kairos_pg_fallback_active{partition="0"} 1',
    'kairos_pg_fallback_active{partition="1"} 0',
    'kairos_pg_fallback_activeX{partition="2"} 1',
  ].join('\n');
  expect([...gaugeByLabel(text, 'kairos_pg_fallback_active', 'partition')]).toEqual([
    ['0', 1],
    ['1', 0],
  ]);
});

test('mode samples become each partition’s stretches; the mode at a moment; the longest PostgreSQL-only', () => {
  const pg = 'PostgreSQL-only' as const;
  const samples = [
    { s: 1, partition: 0, mode: 'hot' as const },
    { s: 2, partition: 0, mode: pg },
    { s: 3, partition: 0, mode: pg },
    { s: 6, partition: 0, mode: 'hot' as const },
    { s: 7, partition: 0, mode: 'hot' as const },
    { s: 2.5, partition: 1, mode: pg },
    { s: 4, partition: 1, mode: 'hot' as const },
  ];
  const spans = modeSpans(samples);
  expect(spans).toEqual([
    { partition: 0, mode: 'hot', from: 1, to: 2 },
    { partition: 0, mode: pg, from: 2, to: 6 },
    { partition: 0, mode: 'hot', from: 6, to: 7 },
    { partition: 1, mode: pg, from: 2.5, to: 4 },
    { partition: 1, mode: 'hot', from: 4, to: 4 },
  ]);
  expect(modeAt(spans, 0, 5.9)).toBe(pg);
  expect(modeAt(spans, 1, 4.5)).toBe('hot');
  expect(modeAt(spans, 7, 3)).toBe('hot');
  expect(longestPgOnly(spans)).toBe(4);
  expect(longestPgOnly([])).toBe(0);
});

test("the herd's midnight: the next whole second after the lead, as a daily UTC cron with seconds", () => {
  const now = Date.parse('2026-12-03T23:59:41.250Z');
  const at = midnightAfter(now, 18_000);
  expect(new Date(at).toISOString()).toBe('2026-12-04T00:00:00.000Z');
  expect(dailyCronAt(at)).toBe('0 0 0 * * *');
  expect(midnightAfter(now, 18_750)).toBe(at); // exactly on a whole second: that one
  expect(dailyCronAt(Date.parse('2026-12-03T14:50:29.000Z'))).toBe('29 50 14 * * *');
});

test('a release curve counts dispatches per 100 ms, empty bins included, widened to the span asked', () => {
  const zero = 1_000_000;
  const times = [zero + 5, zero + 40, zero + 99, zero + 250, zero - 120];
  expect(releaseCurve(times, zero)).toEqual([
    { s: -0.2, n: 1 },
    { s: -0.1, n: 0 },
    { s: 0, n: 3 },
    { s: 0.1, n: 0 },
    { s: 0.2, n: 1 },
  ]);
  // A herd released in one bin still has zero bins around it to draw against.
  expect(releaseCurve([zero, zero], zero, 100, -200, 150)).toEqual([
    { s: -0.2, n: 0 },
    { s: -0.1, n: 0 },
    { s: 0, n: 2 },
    { s: 0.1, n: 0 },
  ]);
  expect(releaseCurve([], zero)).toEqual([]);
  expect(herdRelease(times, zero)).toEqual({ firstMs: -120, lastMs: 250, spreadMs: 370, peakPer100ms: 3 });
  expect(herdRelease([], zero).peakPer100ms).toBe(0);
});

test('quantiles by nearest rank', () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i); // 1..100, unsorted
  expect(quantile(xs, 0.5)).toBe(50);
  expect(quantile(xs, 0.99)).toBe(99);
  expect(quantile(xs, 1)).toBe(100);
  expect(quantile([7], 0.99)).toBe(7);
  expect(quantile([], 0.5)).toBeNaN();
});

test('the batch backlog: jobs due and not finished at each step; never finished stays in it', () => {
  const spans = [
    { dueAtMs: 1000, finishedAtMs: 1500 },
    { dueAtMs: 1000, finishedAtMs: 2500 },
    { dueAtMs: 2000, finishedAtMs: undefined },
  ];
  expect(backlogSeries(spans, 0, 3000, 1000)).toEqual([
    { atMs: 0, backlog: 0 },
    { atMs: 1000, backlog: 2 },
    { atMs: 2000, backlog: 2 },
    { atMs: 3000, backlog: 1 },
  ]);
});

test('critical lateness: start after due, by the phase it fell due in; the first second left out', () => {
  const row = (due: number, dispatched: number, started: number) => ({
    id: `c${due}`,
    state: 'SUCCEEDED',
    dueAtMs: due,
    dispatchedAtMs: dispatched,
    startedAtMs: started,
    finishedAtMs: started + 5,
    attempt: 1,
  });
  const rows = [
    row(3000, 3010, 3030),
    row(500, 700, 900), // the first second: a cold pipeline
    row(1500, 1502, 1520),
    row(12_000, 12_001, 12_020),
    row(20_000, 21_000, 21_050),
    row(26_000, 26_010, 26_040),
    row(31_000, 31_010, 31_030),
  ];
  const windows = [{ fromMs: 19_000, releasedMs: 25_000, drainedMs: 30_000 }];
  expect(criticalLateness(rows, windows, 0, 10_000)).toEqual([
    { s: 1.5, lateMs: 20, dispatchMs: 2, phase: 'unloaded' },
    { s: 3, lateMs: 30, dispatchMs: 10, phase: 'unloaded' },
    { s: 12, lateMs: 20, dispatchMs: 1, phase: 'quiet' },
    { s: 20, lateMs: 1050, dispatchMs: 1000, phase: 'release' },
    { s: 26, lateMs: 40, dispatchMs: 10, phase: 'drain' },
    { s: 31, lateMs: 30, dispatchMs: 10, phase: 'quiet' },
  ]);
});
