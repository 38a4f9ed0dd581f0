import { expect, test } from 'vitest';
import {
  attemptBars,
  counterSum,
  DRILLS,
  drillInputs,
  jobChecks,
  lateness,
  parseWorkerLine,
  seededRandom,
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
  expect(DRILLS.map((d) => d.name)).toEqual(['dispatcher-crash', 'split-brain', 'zombie-worker']);
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
