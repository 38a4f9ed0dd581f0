import type { ProcessDeployment } from '@kairos/ops';
import type { Namespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';
import {
  diagnose,
  owners,
  startChaosDeployment,
  type ChaosDeployment,
  type Topology,
} from './chaos-deployment.js';
import { collect, terminalSnapshot, type Recorded } from './collect.js';
import type { Fault, FaultOutcome } from './faults.js';
import { checkHistory, failoverMs, type AckedJob, type FaultMark, type FaultRow } from './history.js';
import { planLoad } from './load-plan.js';
import { LoadRunner } from './load-runner.js';

export interface ChaosRunOptions {
  readonly seed: number;
  /** Jobs due over the run (beyond the recurring schedule's runs). */
  readonly jobs: number;
  /** Load before the first fault, ms. */
  readonly baselineMs: number;
  /** Time from one fault to the next, ms (longer when a fault takes longer to mend). */
  readonly windowMs: number;
  readonly faults: readonly Fault[];
  /** The apps and partitions. Default: CHAOS_TOPOLOGY. */
  readonly topology?: Topology;
}

/** Partitions per running delay tier (its epoch rows), at one moment of the run. */
export interface Spread {
  readonly after: string;
  readonly perTier: readonly number[];
}

export interface ChaosResult {
  readonly rows: FaultRow[];
  readonly violations: string[];
  /** Jobs that ran much later than due (not a violation; where the time went). */
  readonly late: string[];
  readonly acked: number;
  readonly runs: number;
  readonly apiFailures: number;
  /** How the partitions were spread over the running tiers at the start and after each fault. */
  readonly spreads: readonly Spread[];
}

async function spreadNow(d: ProcessDeployment, after: string): Promise<Spread> {
  const o = await owners(d);
  const perTier = d.apps('delay-tier').map((t) => o.get(t.instanceId)?.length ?? 0);
  return { after, perTier: perTier.sort((a, b) => b - a) };
}

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'SKIPPED'];

async function api(d: ProcessDeployment, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${d.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${d.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A recurring schedule every 3 s on `default`, running the same handler (its effect once per run). */
async function createSchedule(d: ProcessDeployment): Promise<string> {
  const res = await api(d, 'POST', '/v1/schedules', {
    tenant: 'acme',
    cron: '*/3 * * * * *',
    time_zone: 'UTC',
    job: {
      type: 'chaos.work',
      resource_class: 'default',
      payload: { ms: 20 },
      max_attempts: 20,
      retry: { base_ms: 200, cap_ms: 2000, jitter_ms: 200 },
    },
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`schedule refused ${res.status}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Waits until every job of the tenant is terminal; gives up at the deadline (the checker says what is lost). */
async function drain(cd: ChaosDeployment, timeoutMs: number): Promise<void> {
  const { d } = cd;
  const open = async () =>
    (
      await d.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE tenant_id = 'acme' AND NOT (state = ANY($1::text[]))`,
        [TERMINAL],
      )
    ).rows[0]?.n ?? 0;
  await eventually('every job terminal', async () => (await open()) === 0, timeoutMs).catch(
    async (err: unknown) =>
      console.warn(`[chaos] ${String(err)}; ${await open()} jobs left open\n${await diagnose(cd)}`),
  );
}

/** Runs of the schedule: each may be cancelled (the schedule deleted) or skipped, never run twice. */
async function scheduleRuns(d: ProcessDeployment, id: string): Promise<AckedJob[]> {
  const { rows } = await d.pool.query<{ id: string; occurrence_at: Date }>(
    'SELECT id, occurrence_at FROM jobs WHERE schedule_id = $1',
    [id],
  );
  return rows.map((r) => ({ id: r.id, dueMs: r.occurrence_at.getTime(), mayDrop: true }));
}

function marksOf(
  startMs: number,
  marks: { name: string; atMs: number; outcome: FaultOutcome | void }[],
  acked: readonly AckedJob[],
  rec: Recorded,
): FaultMark[] {
  const firstDispatch = new Map<string, number>();
  for (const x of rec.dispatches)
    firstDispatch.set(x.jobId, Math.min(firstDispatch.get(x.jobId) ?? Infinity, x.dispatchedMs));
  // Jobs meant to run (a cancelled one is never dispatched).
  const placed = acked
    .filter((j) => j.cancelAckMs === undefined && !j.mayDrop)
    .map((j) => ({
      shard: rec.shards.get(j.id) ?? -1,
      dueMs: j.dueMs,
      firstDispatchMs: firstDispatch.get(j.id),
    }));
  const faults: FaultMark[] = [{ name: 'baseline (no fault)', atMs: startMs }];
  marks.forEach((m, i) => {
    const o = m.outcome?.orphaned;
    const until = marks[i + 1]?.atMs ?? Infinity;
    faults.push(
      o
        ? { ...m, failoverMs: failoverMs(placed, o.partitions, o.atMs, Math.min(until, o.atMs + 15_000)) }
        : m,
    );
  });
  return faults;
}

/**
 * The chaos run: a seeded load through the public API, the faults one after another under it,
 * then the history of everything checked. Prints the seed (KAIROS_CHAOS_SEED repeats the run).
 */
export async function runChaos(ns: Namespace, o: ChaosRunOptions): Promise<ChaosResult> {
  console.log(
    `[chaos] seed ${o.seed} (KAIROS_CHAOS_SEED=${o.seed} repeats this run), ${o.jobs} jobs, ${o.faults.length} faults`,
  );
  const cd = await startChaosDeployment(ns, o.topology);
  const { d } = cd;
  const spreads = [await spreadNow(d, 'start')];
  const scheduleId = await createSchedule(d);
  const durationMs = o.baselineMs + o.faults.length * o.windowMs;
  const startMs = Date.now();
  const runner = new LoadRunner(d, planLoad({ seed: o.seed, jobs: o.jobs, durationMs }), startMs);
  runner.start();
  const marks: { name: string; atMs: number; outcome: FaultOutcome | void }[] = [];
  // Each terminal job as first seen terminal (before each fault): it must be the same at the end.
  const terminalFirst = new Map<string, string>();
  const seeTerminal = async () => {
    for (const [id, row] of await terminalSnapshot(d)) if (!terminalFirst.has(id)) terminalFirst.set(id, row);
  };
  for (const [i, fault] of o.faults.entries()) {
    const at = startMs + o.baselineMs + i * o.windowMs;
    await eventually(`the time of fault ${fault.name}`, () => Date.now() >= at, durationMs + 600_000);
    await seeTerminal();
    const atMs = Date.now();
    console.log(`[chaos] +${((atMs - startMs) / 1000).toFixed(1)} s ${fault.name}`);
    marks.push({ name: fault.name, atMs, outcome: await fault.inject({ ...cd, ns, seed: o.seed }) });
    spreads.push(await spreadNow(d, fault.name));
  }
  await runner.finish(Date.now() + 60_000);
  await eventually('the schedule deleted', () =>
    api(d, 'DELETE', `/v1/schedules/${scheduleId}`).then(
      (res) => res.ok,
      () => false,
    ),
  );
  await drain(cd, 120_000);
  const rec = await collect(ns, d);
  const terminalLast = await terminalSnapshot(d);
  const acked = runner.acked();
  const runs = await scheduleRuns(d, scheduleId);
  const { rows, violations, late } = checkHistory({
    jobs: [...acked, ...runs],
    states: rec.states,
    dispatches: rec.dispatches,
    starts: rec.starts,
    effects: rec.effects,
    canaries: rec.canaries,
    calls: cd.workers.calls,
    finishedMs: rec.finishedMs,
    terminalFirst,
    terminalLast,
    faults: marksOf(startMs, marks, acked, rec),
  });
  return {
    rows,
    violations,
    late,
    acked: acked.length,
    runs: runs.length,
    apiFailures: runner.failures,
    spreads,
  };
}
